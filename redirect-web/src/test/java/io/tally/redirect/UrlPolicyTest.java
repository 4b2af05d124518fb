package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link UrlPolicy}. */
class UrlPolicyTest {

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "https://example.com",
        "http://example.com",
        "https://example.com/",
        "HTTPS://EXAMPLE.COM/Path",
        "https://www.example.com/a/b/c?x=1&y=%20two#section",
        "https://example.com:8443/path",
        "http://192.0.2.10/",
        "http://[2001:db8::1]:8080/index.html",
        "https://example.com/path;param?q=a,b",
      })
  void acceptsAbsoluteHttpAndHttpsUrlsWithAHostAsTheyAre(String url) {
    assertThat(UrlPolicy.check(url)).isEqualTo(new UrlPolicy.Accepted(url));
  }

  static Stream<Arguments> internationalUrls() {
    return Stream.of(
        Arguments.of("https://ru.wikipedia.org/wiki/Москва", "https://ru.wikipedia.org/wiki/%D0%9C%D0%BE%D1%81%D0%BA%D0%B2%D0%B0"),
        Arguments.of("https://example.com/ünï?q=çà#frägment", "https://example.com/%C3%BCn%C3%AF?q=%C3%A7%C3%A0#fr%C3%A4gment"),
        Arguments.of("https://bücher.de/", "https://xn--bcher-kva.de/"),
        Arguments.of("http://bücher.de:8080/straße", "http://xn--bcher-kva.de:8080/stra%C3%9Fe"),
        Arguments.of("https://example.com/caf%C3%A9", "https://example.com/caf%C3%A9"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("internationalUrls")
  void keepsAnInternationalUrlInTheAsciiFormALocationHeaderCarries(String typed, String stored) {
    assertThat(UrlPolicy.check(typed)).isEqualTo(new UrlPolicy.Accepted(stored));
  }

  @Test
  void acceptsAUrlOfExactlyTheMaximumLength() {
    String url = padded("https://example.com/", UrlPolicy.MAX_LENGTH);

    assertThat(UrlPolicy.check(url)).isEqualTo(new UrlPolicy.Accepted(url));
  }

  static Stream<Arguments> refusedUrls() {
    return Stream.of(
        Arguments.of("javascript:alert(document.cookie)", "scheme 'javascript' is not allowed"),
        Arguments.of("JavaScript:alert(1)", "scheme 'JavaScript' is not allowed"),
        Arguments.of("data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "scheme 'data' is not allowed"),
        Arguments.of("file:///etc/passwd", "scheme 'file' is not allowed"),
        Arguments.of("ftp://ftp.example.com/file.txt", "scheme 'ftp' is not allowed"),
        Arguments.of("mailto:someone@example.com", "scheme 'mailto' is not allowed"),
        Arguments.of("vbscript:msgbox(1)", "scheme 'vbscript' is not allowed"),
        Arguments.of("/relative/path", "must be absolute"),
        Arguments.of("example.com/path", "must be absolute"),
        Arguments.of("//example.com/protocol-relative", "must be absolute"),
        Arguments.of("http:///no-host", "must have a host"),
        Arguments.of("https:", "not a valid URI"),
        Arguments.of("http:example.com", "must have a host"),
        Arguments.of("https://user:pw@example.com/", "must not contain credentials"),
        Arguments.of("https://user@example.com/", "must not contain credentials"),
        Arguments.of("https://example.com@evil.example/", "must not contain credentials"),
        Arguments.of("https://exa mple.com/", "whitespace or a control character at position 11"),
        Arguments.of("https://example.com/a b", "whitespace or a control character"),
        Arguments.of(" https://example.com/", "whitespace or a control character at position 0"),
        Arguments.of("https://example.com/\t", "whitespace or a control character"),
        Arguments.of("https://example.com/\r\nSet-Cookie:x=1", "whitespace or a control character"),
        Arguments.of("https://example.com/\u0000", "whitespace or a control character"),
        Arguments.of("https://example.com/\u007f", "whitespace or a control character"),
        Arguments.of("https://example.com/\u0085", "whitespace or a control character"),
        Arguments.of("https://example.com/<script>", "not a valid URI"),
        Arguments.of("https://example.com\\@evil.example/", "not a valid URI"),
        Arguments.of("https://exa_mple.com/", "not a valid host name"),
        Arguments.of(padded("https://example.com/", UrlPolicy.MAX_LENGTH + 1), "longer than 2048 characters"),
        Arguments.of(padded("https://example.com/", UrlPolicy.MAX_LENGTH - 10) + "éééééééééé", "once non-ASCII characters are encoded"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusedUrls")
  void refusesUnsafeOrMalformedUrlsWithAReason(String url, String reason) {
    assertThat(UrlPolicy.check(url)).isInstanceOfSatisfying(
        UrlPolicy.Refused.class, refused -> assertThat(refused.reason()).contains(reason));
  }

  @ParameterizedTest
  @NullAndEmptySource
  void refusesAMissingUrl(String url) {
    assertThat(UrlPolicy.check(url)).isEqualTo(new UrlPolicy.Refused("url is required"));
  }

  private static String padded(String prefix, int length) {
    return prefix + "a".repeat(length - prefix.length());
  }
}
