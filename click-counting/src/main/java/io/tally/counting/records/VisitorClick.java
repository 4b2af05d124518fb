package io.tally.counting.records;

import java.util.UUID;

/**
 * A person's click id within its visitor's day on the link: the key of the dedup that people's
 * clicks take on their way to the visitor marks.
 *
 * <p>The hash code is the visitor day's alone: Flink places a key by its hash code, so every click
 * of a visitor's day lands on the subtask whose key group holds that {@link VisitorDay}, where the
 * marks ({@code MarkNewVisitors}, keyed by the visitor day) can follow without a shuffle. Equal
 * keys still have equal hash codes.
 *
 * @param visitorDay the link, visitor hash and UTC day of the click
 * @param clickId the click id
 */
public record VisitorClick(VisitorDay visitorDay, UUID clickId) {

  @Override
  public int hashCode() {
    return visitorDay.hashCode();
  }
}
