package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.event.HostileText;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Properties of {@link UrlPolicy} over generated URLs: any text is refused with a reason or
 * accepted in a form a {@code Location} header can carry.
 */
class UrlPolicyPropertiesTest {

  /** An absolute http(s) URL's scheme and authority, read apart from {@link java.net.URI}. */
  private static final Pattern HTTP_URL =
      Pattern.compile("(?i:https?)://(?<authority>[^/?#]*)(?:[/?#].*)?", Pattern.DOTALL);

  private final UrlPolicy policy = new UrlPolicy("https://tly.example");

  @Property(tries = 3000)
  void anyTextIsRefusedWithAReasonOrAcceptedAsAnAsciiHttpUrlWithAHost(@ForAll("urls") String url) {
    UrlPolicy.Verdict verdict = policy.check(url);

    if (verdict instanceof UrlPolicy.Refused refused) {
      assertThat(refused.reason()).isNotBlank();
      return;
    }
    String accepted = ((UrlPolicy.Accepted) verdict).url();
    assertThat(accepted).hasSizeLessThanOrEqualTo(UrlPolicy.MAX_LENGTH);
    assertThat(accepted)
        .as("printable ASCII: no control character, whitespace or other character")
        .matches("[\\x21-\\x7e]*");
    Matcher m = HTTP_URL.matcher(accepted);
    assertThat(m.matches()).as("an absolute http or https URL: %s", accepted).isTrue();
    String authority = m.group("authority");
    assertThat(authority).as("no credentials").doesNotContain("@");
    assertThat(hostOf(authority)).as("the host of %s", accepted).isNotEmpty();
  }

  private static String hostOf(String authority) {
    if (authority.startsWith("[")) {
      return authority.substring(0, authority.indexOf(']') + 1);
    }
    int colon = authority.lastIndexOf(':');
    return colon < 0 ? authority : authority.substring(0, colon);
  }

  /**
   * URLs of a scheme, an authority and a path, each from pieces that break URL parsers:
   * international hosts, controls, lone surrogates, whitespace, percent signs, credentials, and
   * paths of ASCII and non-ASCII characters around {@link UrlPolicy#MAX_LENGTH}, whose encoded form
   * is longer than typed.
   */
  @Provide
  Arbitrary<String> urls() {
    Arbitrary<String> scheme =
        Arbitraries.of(
            "http://",
            "https://",
            "HTTPS://",
            "hTtP://",
            "javascript:",
            "data:",
            "ftp://",
            "//",
            "http:",
            "http:///",
            "");
    Arbitrary<String> host =
        Arbitraries.of(
            "example.com",
            "Example.COM.",
            "bücher.de",
            "faß.de",
            "пример.рф",
            "ｅｘａｍｐｌｅ．ｃｏｍ",
            "xn--a.de",
            "ex_ample.com",
            "203.0.113.7",
            "[2001:db8::1]",
            "[::1",
            "user:pw@example.com",
            "@example.com",
            "example.com:8080",
            "example.com:",
            "example.com:x",
            "tly.example",
            "",
            "a\u0000b.com",
            "exa mple.com",
            "\ud800.com",
            "😀.example",
            "%65xample.com");
    Arbitrary<String> path = HostileText.of(List.of("%2F", "%zz", "путь"));
    Arbitrary<String> composed =
        Combinators.combine(scheme, host, path).as((s, h, p) -> s + h + "/" + p);
    Arbitrary<String> nearMaxLength =
        Combinators.combine(
                Arbitraries.of("https://example.com/", "https://bücher.de/"),
                Arbitraries.integers().between(UrlPolicy.MAX_LENGTH - 40, UrlPolicy.MAX_LENGTH + 2),
                Arbitraries.of('a', 'é', 'ж'),
                Arbitraries.integers().between(0, 40))
            .as(
                (base, length, wide, wideCount) -> {
                  int pad = Math.max(0, length - base.length());
                  int wides = Math.min(wideCount, pad);
                  return base + String.valueOf(wide).repeat(wides) + "a".repeat(pad - wides);
                });
    return Arbitraries.oneOf(composed, nearMaxLength, Arbitraries.strings().all().ofMaxLength(100));
  }
}
