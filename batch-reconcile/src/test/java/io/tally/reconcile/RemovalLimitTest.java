package io.tally.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Tests for {@link RemovalLimit}: how much of the stored clicks a repair may remove. */
class RemovalLimitTest {

  private final RemovalLimit fivePercent = new RemovalLimit(0.05, false);

  @Test
  void removingUpToTheShareIsAllowed() {
    assertThat(fivePercent.refusal("click_counts", 50, 1000)).isEmpty();
    assertThat(fivePercent.refusal("click_counts", 0, 0)).isEmpty();
  }

  @Test
  void removingMoreThanTheShareIsRefusedWithTheFigures() {
    assertThat(fivePercent.refusal("click_hourly", 51, 1000))
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .contains(
                        "remove 51 of the 1000 clicks stored in the checked rows of click_hourly"
                            + " (5.1%)")
                    .contains("--max-removed-share 0.05 (5%)")
                    .contains("--force"));
  }

  @Test
  void removingFromRowsThatHoldNoClicksIsRefused() {
    assertThat(fivePercent.refusal("click_counts", 1, 0)).isPresent();
  }

  @Test
  void forceAllowsAnything() {
    assertThat(new RemovalLimit(0.05, true).refusal("click_counts", 1000, 1000)).isEmpty();
  }

  @Test
  void aZeroShareRefusesAnyRemoval() {
    assertThat(new RemovalLimit(0, false).refusal("click_counts", 1, 1_000_000)).isPresent();
  }
}
