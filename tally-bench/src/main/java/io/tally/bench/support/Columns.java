package io.tally.bench.support;

import io.tally.testing.Table;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;

/**
 * A table's columns, each declared once as its header and the cell it prints for a row, so that a
 * table is its rows under these columns.
 *
 * @param <T> what one row is made from
 */
public final class Columns<T> {

  private final List<String> headers;
  private final List<Function<? super T, ?>> cells;

  public Columns() {
    this(List.of(), List.of());
  }

  private Columns(List<String> headers, List<Function<? super T, ?>> cells) {
    this.headers = headers;
    this.cells = cells;
  }

  /** These columns and one more, whose cell for a row is {@code cell} of it. */
  public Columns<T> and(String header, Function<? super T, ?> cell) {
    List<String> moreHeaders = new ArrayList<>(headers);
    moreHeaders.add(header);
    List<Function<? super T, ?>> moreCells = new ArrayList<>(cells);
    moreCells.add(cell);
    return new Columns<T>(List.copyOf(moreHeaders), List.copyOf(moreCells));
  }

  /** These columns and {@code more}, which read the part of a row that {@code part} picks. */
  public <P> Columns<T> and(Columns<P> more, Function<? super T, ? extends P> part) {
    Columns<T> all = this;
    for (int i = 0; i < more.headers.size(); i++) {
      Function<? super P, ?> cell = more.cells.get(i);
      all = all.and(more.headers.get(i), row -> cell.apply(part.apply(row)));
    }
    return all;
  }

  /** A table of {@code rows}, in their order, under these columns. */
  public Table table(String title, Collection<? extends T> rows) {
    Table table = new Table(title, headers.toArray(String[]::new));
    for (T row : rows) {
      table.row(cells.stream().map(cell -> cell.apply(row)).toArray());
    }
    return table;
  }
}
