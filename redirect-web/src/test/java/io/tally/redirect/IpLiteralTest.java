package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link IpLiteral}. */
class IpLiteralTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "cafe.de",
        "beef.cafe",
        "localhost",
        "999.1.1.1",
        "1.2.3",
        "1.2.3.4.5",
        "1..2.3",
        "+1.2.3.4",
        ".1.2.3",
        "1.2.3.",
        "1.2.3.0001",
        "1.2.3.256",
        "1.2.3.4 ",
        "1.2.3.-4",
        "1.2.3.4x",
        "fe80::1%eth0",
        "[cafe.de]",
        ""
      })
  void readsOnlyIpLiteralsSoNothingIsEverLookedUp(String notALiteral) {
    assertThat(IpLiteral.parse(notALiteral)).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "203.0.113.77",
        "0.0.0.0",
        "255.255.255.255",
        "10.0.0.10",
        "2001:db8::1",
        "::ffff:203.0.113.77"
      })
  void readsIpv4AndIpv6Literals(String literal) throws Exception {
    assertThat(IpLiteral.parse(literal)).contains(InetAddress.getByName(literal));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          [0:0:0:0:0:0:0:1]  | 0:0:0:0:0:0:0:1
          ::1                | 0:0:0:0:0:0:0:1
          [::1]              | 0:0:0:0:0:0:0:1
          2001:DB8::1        | 2001:db8:0:0:0:0:0:1
          ' 198.51.100.7 '   | 198.51.100.7
          198.051.100.007    | 198.51.100.7
          00.1.2.3           | 0.1.2.3
          0.0.0.0            | 0.0.0.0
          10.0.0.10          | 10.0.0.10
          [203.0.113.7]      | 203.0.113.7
          203.0.113.5:51234  | 203.0.113.5
          [2001:db8::1]:443  | 2001:db8:0:0:0:0:0:1
          203.0.113.5:99999  | 203.0.113.5:99999
          cafe.de:80         | cafe.de:80
          not-an-address     | not-an-address
          """)
  void spellsEveryAddressOneWay(String written, String canonical) {
    assertThat(IpLiteral.canonical(written)).isEqualTo(canonical);
  }
}
