package io.tally.launcher;

import java.util.stream.IntStream;

/**
 * Ports tried in order until one binds, as Flink's Prometheus reporter takes them ({@code
 * 9250-9260}, or one port): a range lets several processes on one host each find a port of their
 * own. {@link #ANY} (written {@code 0}) stands for free ports picked at start.
 *
 * @param first the first port tried
 * @param last the last port tried, at least {@code first}
 */
public record PortRange(int first, int last) {

  /** Free ports, picked when the stack starts. */
  public static final PortRange ANY = new PortRange(0, 0);

  public PortRange {
    if (first < 0 || last > 65535 || last < first) {
      throw new IllegalArgumentException("not a port range: " + first + "-" + last);
    }
  }

  /**
   * Reads {@code 9250-9260}, {@code 9250} or {@code 0}; anything else fails with a message naming
   * {@code envVar}.
   */
  public static PortRange parse(String text, String envVar) {
    String[] bounds = text.trim().split("-", -1);
    try {
      if (bounds.length == 1 || bounds.length == 2) {
        int first = Integer.parseInt(bounds[0].trim());
        int last = bounds.length == 1 ? first : Integer.parseInt(bounds[1].trim());
        return new PortRange(first, last);
      }
    } catch (IllegalArgumentException e) {
      // reported below, with the variable's name
    }
    throw new IllegalArgumentException(
        envVar + " must be a port or a range of ports such as 9250-9260, not '" + text + "'");
  }

  /** The ports in the order they are tried. */
  public IntStream ports() {
    return IntStream.rangeClosed(first, last);
  }

  /** As Flink's reporter option {@code metrics.reporter.prom.port} takes it. */
  @Override
  public String toString() {
    return first == last ? String.valueOf(first) : first + "-" + last;
  }
}
