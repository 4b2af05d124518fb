package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** Tests for {@link ClickBursts}. */
class ClickBurstsTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ClickBursts bursts = new ClickBursts(60, 64, registry);

  @Test
  void aMinutesClicksOnOneLinkArePeoplesAndEveryOneAfterIsABursts() {
    for (int i = 0; i < 60; i++) {
      assertThat(bursts.isBurst("198.51.100.23", "abc")).as("click %d", i).isFalse();
    }
    for (int i = 0; i < 40; i++) {
      assertThat(bursts.isBurst("198.51.100.23", "abc")).isTrue();
    }
    assertThat(registry.get("tally.clicks.burst").counter().count()).isEqualTo(40);
  }

  @Test
  void aBurstOnOneLinkLeavesTheClientsOtherLinksAndOtherClientsAlone() {
    for (int i = 0; i < 61; i++) {
      bursts.isBurst("198.51.100.23", "abc");
    }
    assertThat(bursts.isBurst("198.51.100.23", "abc")).isTrue();
    assertThat(bursts.isBurst("198.51.100.23", "other")).isFalse();
    assertThat(bursts.isBurst("198.51.100.24", "abc")).isFalse();
  }

  @Test
  void addressesOfOneIpv6NetworkAreOneClient() {
    for (int i = 0; i < 60; i++) {
      assertThat(bursts.isBurst("2001:db8:1:2::" + Integer.toHexString(i + 1), "abc")).isFalse();
    }
    assertThat(bursts.isBurst("2001:db8:1:2:ffff::9", "abc")).isTrue();
    assertThat(bursts.isBurst("2001:db8:1:3::1", "abc")).isFalse();
  }

  @Test
  void offMarksNothing() {
    ClickBursts off = ClickBursts.off(registry);
    for (int i = 0; i < 500; i++) {
      assertThat(off.isBurst("198.51.100.23", "abc")).isFalse();
    }
  }
}
