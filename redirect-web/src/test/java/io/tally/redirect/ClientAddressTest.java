package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link ClientAddress}. */
class ClientAddressTest {

  private static final String PROXY = "10.0.0.1";
  private static final String INNER_PROXY = "10.0.0.2";
  private final ClientAddress withProxies = new ClientAddress(Set.of(PROXY, INNER_PROXY));
  private final ClientAddress withoutProxies = new ClientAddress(Set.of());

  @Test
  void isThePeerWhenThereIsNoForwardedHeader() {
    assertThat(withProxies.resolve("198.51.100.7", List.of())).isEqualTo("198.51.100.7");
    assertThat(withProxies.resolve(PROXY, List.of())).isEqualTo(PROXY);
    assertThat(withProxies.resolve(PROXY, List.of("  "))).isEqualTo(PROXY);
  }

  @Test
  void ignoresForwardedForFromAPeerThatIsNotATrustedProxy() {
    // Anyone can send this header; believing it would let clients pick their own identity.
    assertThat(withProxies.resolve("198.51.100.7", List.of("203.0.113.9")))
        .isEqualTo("198.51.100.7");
    assertThat(withoutProxies.resolve(PROXY, List.of("203.0.113.9"))).isEqualTo(PROXY);
  }

  @Test
  void recognisesAnIpv6ProxyAsJettyWritesItsAddress() {
    // Jetty gives an IPv6 peer in brackets and in full; the operator lists the proxy as usual.
    ClientAddress behindIpv6Proxy = new ClientAddress(Set.of("fd00::2"));

    assertThat(behindIpv6Proxy.resolve("[fd00:0:0:0:0:0:0:2]", List.of("2001:db8::7")))
        .isEqualTo("2001:db8:0:0:0:0:0:7");
    assertThat(behindIpv6Proxy.resolve("[0:0:0:0:0:0:0:1]", List.of("2001:db8::7")))
        .isEqualTo("0:0:0:0:0:0:0:1");
  }

  @Test
  void aForwardedHopWithItsPortIsOneClientWhateverThePort() {
    assertThat(withProxies.resolve(PROXY, List.of("203.0.113.5:51234")))
        .isEqualTo(withProxies.resolve(PROXY, List.of("203.0.113.5:40000")))
        .isEqualTo("203.0.113.5");
    assertThat(withProxies.resolve(PROXY, List.of("[2001:db8::7]:443")))
        .isEqualTo("2001:db8:0:0:0:0:0:7");
  }

  @Test
  void believesForwardedForFromATrustedProxy() {
    assertThat(withProxies.resolve(PROXY, List.of("203.0.113.9"))).isEqualTo("203.0.113.9");
  }

  @ParameterizedTest(name = "X-Forwarded-For: {0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          203.0.113.9, 10.0.0.2                 | 203.0.113.9
          1.2.3.4, 203.0.113.9                  | 203.0.113.9
          1.2.3.4, 203.0.113.9, 10.0.0.2        | 203.0.113.9
          1.2.3.4,203.0.113.9,10.0.0.1,10.0.0.2 | 203.0.113.9
          spoofed, 203.0.113.9 , 10.0.0.2       | 203.0.113.9
          203.0.113.9, , 10.0.0.2               | 203.0.113.9
          2001:db8::7, 10.0.0.2                 | 2001:db8:0:0:0:0:0:7
          """)
  void takesTheRightMostHopThatIsNotATrustedProxy(String forwardedFor, String client) {
    // Entries left of the first untrusted hop were written by the client and prove nothing.
    assertThat(withProxies.resolve(PROXY, List.of(forwardedFor))).isEqualTo(client);
  }

  @Test
  void isThePeerWhenEveryForwardedHopIsATrustedProxy() {
    assertThat(withProxies.resolve(PROXY, List.of("10.0.0.2, 10.0.0.1"))).isEqualTo(PROXY);
    assertThat(withProxies.resolve(PROXY, List.of(" , "))).isEqualTo(PROXY);
  }

  @Test
  void readsEveryForwardedForLineAsOneListInOrder() {
    // A proxy may add a line of its own rather than extend the client's; only the last line is the
    // proxy's.
    assertThat(withProxies.resolve(PROXY, List.of("203.0.113.9", "198.51.100.4")))
        .isEqualTo("198.51.100.4");
    assertThat(withProxies.resolve(PROXY, List.of("6.6.6.6, 203.0.113.9", "10.0.0.2")))
        .isEqualTo("203.0.113.9");
    assertThat(withProxies.resolve(PROXY, List.of("6.6.6.6", "203.0.113.9, 10.0.0.2")))
        .isEqualTo("203.0.113.9");
  }

  @Test
  void trustsEveryAddressOfAConfiguredCidrBlock() {
    ClientAddress behindBlocks =
        new ClientAddress(List.of("10.0.0.0/8", "172.16.0.0/12", "fd00::/64", "192.0.2.1"));

    assertThat(behindBlocks.isTrustedProxy("10.200.3.4")).isTrue();
    assertThat(behindBlocks.isTrustedProxy("172.31.255.255")).isTrue();
    assertThat(behindBlocks.isTrustedProxy("172.32.0.1")).isFalse();
    assertThat(behindBlocks.isTrustedProxy("[fd00:0:0:0:0:0:0:2]")).isTrue();
    assertThat(behindBlocks.isTrustedProxy("fd00:0:0:1::2")).isFalse();
    assertThat(behindBlocks.isTrustedProxy("192.0.2.1")).isTrue();
    assertThat(behindBlocks.isTrustedProxy("192.0.2.2")).isFalse();
    assertThat(behindBlocks.isTrustedProxy("not-an-address")).isFalse();
    assertThat(behindBlocks.resolve("10.1.2.3", List.of("203.0.113.9, 172.20.0.5, 10.9.9.9")))
        .isEqualTo("203.0.113.9");
  }

  @Test
  void trustsEveryAddressUnderAZeroLengthPrefix() {
    ClientAddress trustingAllV4 = new ClientAddress(List.of("0.0.0.0/0"));

    assertThat(trustingAllV4.isTrustedProxy("198.51.100.7")).isTrue();
    assertThat(trustingAllV4.isTrustedProxy("::1")).isFalse();
  }

  @Test
  void trustsNoPeerWhenNoProxyIsConfigured() {
    assertThat(withoutProxies.isTrustedProxy("127.0.0.1")).isFalse();
    assertThat(withProxies.isTrustedProxy(PROXY)).isTrue();
    assertThat(withProxies.isTrustedProxy("10.0.0.3")).isFalse();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "proxy.internal",
        "10.0.0.0/33",
        "fd00::/129",
        "10.0.0.0/",
        "10.0.0.0/-1",
        "10.0.0/8",
        "/8"
      })
  void refusesAnEntryThatIsNeitherAnAddressNorACidrBlock(String entry) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new ClientAddress(List.of(entry)))
        .withMessageContaining("'" + entry + "'");
  }
}
