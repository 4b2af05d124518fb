package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Tests for {@link ClientAddress}. */
class ClientAddressTest {

  private static final String PROXY = "10.0.0.1";
  private static final String INNER_PROXY = "10.0.0.2";
  private final ClientAddress withProxies = new ClientAddress(Set.of(PROXY, INNER_PROXY));
  private final ClientAddress withoutProxies = new ClientAddress(Set.of());

  @Test
  void isThePeerWhenThereIsNoForwardedHeader() {
    assertThat(withProxies.resolve("198.51.100.7", null)).isEqualTo("198.51.100.7");
    assertThat(withProxies.resolve(PROXY, null)).isEqualTo(PROXY);
    assertThat(withProxies.resolve(PROXY, "  ")).isEqualTo(PROXY);
  }

  @Test
  void ignoresForwardedForFromAPeerThatIsNotATrustedProxy() {
    // Anyone can send this header; believing it would let clients pick their own identity.
    assertThat(withProxies.resolve("198.51.100.7", "203.0.113.9")).isEqualTo("198.51.100.7");
    assertThat(withoutProxies.resolve(PROXY, "203.0.113.9")).isEqualTo(PROXY);
  }

  @Test
  void recognisesAnIpv6ProxyAsJettyWritesItsAddress() {
    // Jetty gives an IPv6 peer in brackets and in full; the operator lists the proxy as usual.
    ClientAddress behindIpv6Proxy = new ClientAddress(Set.of("fd00::2"));

    assertThat(behindIpv6Proxy.resolve("[fd00:0:0:0:0:0:0:2]", "2001:db8::7")).isEqualTo("2001:db8:0:0:0:0:0:7");
    assertThat(behindIpv6Proxy.resolve("[0:0:0:0:0:0:0:1]", "2001:db8::7")).isEqualTo("0:0:0:0:0:0:0:1");
  }

  @Test
  void believesForwardedForFromATrustedProxy() {
    assertThat(withProxies.resolve(PROXY, "203.0.113.9")).isEqualTo("203.0.113.9");
  }

  @ParameterizedTest(name = "X-Forwarded-For: {0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock = """
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
    assertThat(withProxies.resolve(PROXY, forwardedFor)).isEqualTo(client);
  }

  @Test
  void isThePeerWhenEveryForwardedHopIsATrustedProxy() {
    assertThat(withProxies.resolve(PROXY, "10.0.0.2, 10.0.0.1")).isEqualTo(PROXY);
    assertThat(withProxies.resolve(PROXY, " , ")).isEqualTo(PROXY);
  }
}
