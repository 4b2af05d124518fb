package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Tests for {@link RateLimits#addressKey}: which addresses count as one client. */
class AddressKeyTest {

  @Test
  void anIpv4AddressIsAClientOfItsOwn() {
    assertThat(RateLimits.addressKey("203.0.113.5", 64)).isEqualTo("203.0.113.5");
  }

  @Test
  void everyIpv6AddressOfOneNetworkOfThePrefixIsOneClient() {
    assertThat(RateLimits.addressKey("2001:db8:1:2:aaaa::1", 64))
        .isEqualTo(RateLimits.addressKey("2001:db8:1:2:ffff:1:2:3", 64))
        .isEqualTo("20010db800010002::/64");
    assertThat(RateLimits.addressKey("2001:db8:1:2::1", 64))
        .isNotEqualTo(RateLimits.addressKey("2001:db8:1:3::1", 64));
  }

  @Test
  void aShorterPrefixJoinsMoreNetworksAndOneOfOddLengthCutsInsideAByte() {
    assertThat(RateLimits.addressKey("2001:db8:1:2::1", 56))
        .isEqualTo(RateLimits.addressKey("2001:db8:1:ff::1", 56))
        .isEqualTo("20010db8000100::/56");
    assertThat(RateLimits.addressKey("2001:db8:1:7f::1", 57))
        .isNotEqualTo(RateLimits.addressKey("2001:db8:1:80::1", 57));
    assertThat(RateLimits.addressKey("2001:db8::1", 128))
        .isNotEqualTo(RateLimits.addressKey("2001:db8::2", 128));
  }
}
