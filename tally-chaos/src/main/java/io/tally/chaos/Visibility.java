package io.tally.chaos;

import java.util.ArrayList;
import java.util.List;

/**
 * How long each click on one link takes to show: from its sending until {@code click_counts} holds
 * as many of the link's clicks as had been sent with it. Safe to feed from one thread and read from
 * another.
 */
final class Visibility {

  private final ChaosStack stack;
  private final String code;
  private final long before;

  /** Per click sent: when it was sent and when it showed (0: not yet), in epoch milliseconds. */
  private final List<long[]> clicks = new ArrayList<>();

  /** Watches {@code code}, whose {@code alreadyCounted} clicks before these are in the table. */
  Visibility(ChaosStack stack, String code, long alreadyCounted) {
    this.stack = stack;
    this.code = code;
    this.before = alreadyCounted;
  }

  /** One more click on the link, sent at {@code atMillis}. */
  synchronized void sent(long atMillis) {
    clicks.add(new long[] {atMillis, 0});
  }

  /** Marks each click visible the first time the table holds it. */
  void watch() {
    long held = stack.clicks(code) - before;
    long now = System.currentTimeMillis();
    synchronized (this) {
      for (int i = 0; i < clicks.size() && i < held; i++) {
        if (clicks.get(i)[1] == 0) {
          clicks.get(i)[1] = now;
        }
      }
    }
  }

  synchronized int sent() {
    return clicks.size();
  }

  synchronized boolean allVisible() {
    return clicks.stream().allMatch(c -> c[1] != 0);
  }

  /** The longest wait in milliseconds; {@link Long#MAX_VALUE} while a click has not shown. */
  synchronized long slowest() {
    return clicks.stream().mapToLong(c -> c[1] == 0 ? Long.MAX_VALUE : c[1] - c[0]).max().orElse(0);
  }

  /** The slowest wait and the number of clicks, for a check's detail. */
  String describe() {
    long slowest = slowest();
    String wait = slowest == Long.MAX_VALUE ? "never" : slowest + " ms";
    return "slowest " + wait + " of " + sent() + " clicks";
  }
}
