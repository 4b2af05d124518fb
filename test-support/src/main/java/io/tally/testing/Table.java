package io.tally.testing;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain-text table with a title, right-aligned numbers and left-aligned text, printed as a block.
 */
public final class Table {

  private final String title;
  private final List<String> header;
  private final List<List<String>> rows = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();

  public Table(String title, String... header) {
    this.title = title;
    this.header = Arrays.asList(header);
  }

  public Table row(Object... cells) {
    if (cells.length != header.size()) {
      throw new IllegalArgumentException(
          "row has " + cells.length + " cells, header " + header.size());
    }
    List<String> row = new ArrayList<>();
    for (Object cell : cells) {
      row.add(String.valueOf(cell));
    }
    rows.add(row);
    return this;
  }

  /** A line printed under the table. */
  public Table note(String note) {
    notes.add(note);
    return this;
  }

  public void print(PrintStream out) {
    int[] width = new int[header.size()];
    for (int i = 0; i < width.length; i++) {
      width[i] = header.get(i).length();
      for (List<String> row : rows) {
        width[i] = Math.max(width[i], row.get(i).length());
      }
    }
    StringBuilder s = new StringBuilder();
    s.append('\n').append("## ").append(title).append('\n').append('\n');
    line(s, header, width, true);
    // A Markdown table: the block pastes into docs/benchmarks.md as it is.
    s.append('|');
    for (int i = 0; i < width.length; i++) {
      s.append(i == 0 ? ":" + "-".repeat(width[i] + 1) : "-".repeat(width[i] + 1) + ":")
          .append('|');
    }
    s.append('\n');
    for (List<String> row : rows) {
      line(s, row, width, false);
    }
    for (String note : notes) {
      s.append('\n').append(note);
    }
    if (!notes.isEmpty()) {
      s.append('\n');
    }
    out.print(s);
    out.flush();
  }

  private static void line(StringBuilder s, List<String> cells, int[] width, boolean header) {
    s.append('|');
    for (int i = 0; i < cells.size(); i++) {
      String cell = cells.get(i);
      String pad = " ".repeat(width[i] - cell.length());
      s.append(' ');
      s.append(i == 0 || header ? cell + pad : pad + cell);
      s.append(" |");
    }
    s.append('\n');
  }

  /** Formats with a fixed number of decimals. */
  public static String fmt(double value, int decimals) {
    if (Double.isNaN(value)) {
      return "–";
    }
    return String.format(java.util.Locale.ROOT, "%." + decimals + "f", value);
  }

  /** Formats an integer count with thousands separators. */
  /** Bytes as mebibytes with one decimal, "–" when not known (negative). */
  public static String mib(long bytes) {
    return bytes < 0 ? "–" : fmt(bytes / 1024.0 / 1024.0, 1);
  }

  public static String count(long value) {
    return String.format(java.util.Locale.ROOT, "%,d", value);
  }
}
