package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link UrlPolicy}. */
class UrlPolicyTest {

  private static final UrlPolicy POLICY = new UrlPolicy("https://tly.example/");

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
    assertThat(POLICY.check(url)).isEqualTo(new UrlPolicy.Accepted(url));
  }

  static Stream<Arguments> internationalUrls() {
    return Stream.of(
        Arguments.of(
            "https://ru.wikipedia.org/wiki/Москва",
            "https://ru.wikipedia.org/wiki/%D0%9C%D0%BE%D1%81%D0%BA%D0%B2%D0%B0"),
        Arguments.of(
            "https://example.com/ünï?q=çà#frägment",
            "https://example.com/%C3%BCn%C3%AF?q=%C3%A7%C3%A0#fr%C3%A4gment"),
        Arguments.of("https://bücher.de/", "https://xn--bcher-kva.de/"),
        Arguments.of("http://bücher.de:8080/straße", "http://xn--bcher-kva.de:8080/stra%C3%9Fe"),
        Arguments.of("https://example.com/caf%C3%A9", "https://example.com/caf%C3%A9"),
        Arguments.of("https://example.com/\ud83d\ude00", "https://example.com/%F0%9F%98%80"),
        // UTS #46 non-transitional: ß and ς are letters of their own, not ss and σ (another
        // domain).
        Arguments.of("https://faß.de/", "https://xn--fa-hia.de/"),
        Arguments.of("https://βόλος.com/", "https://xn--nxasmm1c.com/"),
        Arguments.of("https://Bücher.DE/", "https://xn--bcher-kva.de/"),
        Arguments.of("https://ｂüｃｈｅｒ.de/", "https://xn--bcher-kva.de/"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("internationalUrls")
  void keepsAnInternationalUrlInTheAsciiFormALocationHeaderCarries(String typed, String stored) {
    assertThat(POLICY.check(typed)).isEqualTo(new UrlPolicy.Accepted(stored));
  }

  @Test
  void acceptsAUrlOfExactlyTheMaximumLength() {
    String url = padded("https://example.com/", UrlPolicy.MAX_LENGTH);

    assertThat(POLICY.check(url)).isEqualTo(new UrlPolicy.Accepted(url));
  }

  static Stream<Arguments> refusedUrls() {
    return Stream.of(
        Arguments.of("javascript:alert(document.cookie)", "scheme 'javascript' is not allowed"),
        Arguments.of("JavaScript:alert(1)", "scheme 'JavaScript' is not allowed"),
        Arguments.of(
            "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
            "scheme 'data' is not allowed"),
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
        Arguments.of("https://example.com/\ud800", "lone surrogate at position 20"),
        Arguments.of("https://example.com/?q=\udfff\ud83d", "lone surrogate at position 23"),
        Arguments.of("https://example.com/<script>", "not a valid URI"),
        Arguments.of("https://example.com\\@evil.example/", "not a valid URI"),
        Arguments.of("https://exa_mple.com/", "not a valid host name"),
        Arguments.of("https://a\u200Db.example/", "not a valid host name"),
        Arguments.of("https://bü_cher.de/", "not a valid host name"),
        Arguments.of("https://xn--fa-hia-.ü.de/", "not a valid host name"),
        Arguments.of(
            padded("https://example.com/", UrlPolicy.MAX_LENGTH + 1),
            "longer than 2048 characters"),
        Arguments.of(
            padded("https://example.com/", UrlPolicy.MAX_LENGTH - 10) + "éééééééééé",
            "once non-ASCII characters are encoded"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusedUrls")
  void refusesUnsafeOrMalformedUrlsWithAReason(String url, String reason) {
    assertThat(POLICY.check(url))
        .isInstanceOfSatisfying(
            UrlPolicy.Refused.class, refused -> assertThat(refused.reason()).contains(reason));
  }

  @ParameterizedTest
  @NullAndEmptySource
  void refusesAMissingUrl(String url) {
    assertThat(POLICY.check(url)).isEqualTo(new UrlPolicy.Refused("url is required"));
  }

  private static String padded(String prefix, int length) {
    return prefix + "a".repeat(length - prefix.length());
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "https://tly.example/abc",
        "https://tly.example",
        "https://TLY.Example/abc",
        "https://tly.example:443/abc",
        "http://tly.example/abc",
        "http://tly.example:80/abc",
        "https://tly.example./abc",
        "https://ｔｌｙ.example/abc",
      })
  void refusesAUrlThatPointsBackAtThisShortener(String url) {
    // A short link to one of our own short links is at best a detour and at worst a loop.
    assertThat(POLICY.check(url))
        .isInstanceOfSatisfying(
            UrlPolicy.Refused.class,
            refused ->
                assertThat(refused.reason())
                    .contains("points back at this shortener (tly.example)"));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "https://tly.example:8443/abc",
        "https://sub.tly.example/abc",
        "https://tly.example.com/abc"
      })
  void acceptsAnotherPortOrHostNextToThisShortener(String url) {
    assertThat(POLICY.check(url)).isEqualTo(new UrlPolicy.Accepted(url));
  }

  @Test
  void refusesOnlyUrlsUnderThePathOfAPublicUrlThatHasOne() {
    UrlPolicy underPath = new UrlPolicy("http://localhost:8080/s/");

    assertThat(underPath.check("http://localhost:8080/s/abc"))
        .isInstanceOf(UrlPolicy.Refused.class);
    assertThat(underPath.check("http://LOCALHOST:8080/s")).isInstanceOf(UrlPolicy.Refused.class);
    assertThat(underPath.check("http://localhost:8080/shop"))
        .isInstanceOf(UrlPolicy.Accepted.class);
    assertThat(underPath.check("http://localhost:9090/s/abc"))
        .isInstanceOf(UrlPolicy.Accepted.class);
  }

  @Test
  void comparesAnInternationalPublicHostAfterUts46() {
    UrlPolicy international = new UrlPolicy("https://faß.de");

    assertThat(international.check("https://xn--fa-hia.de/x"))
        .isInstanceOf(UrlPolicy.Refused.class);
    assertThat(international.check("https://FAß.de/x")).isInstanceOf(UrlPolicy.Refused.class);
    assertThat(international.check("https://fass.de/x"))
        .isEqualTo(new UrlPolicy.Accepted("https://fass.de/x"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"tly.example", "ftp://tly.example/", "https://"})
  void refusesAPublicUrlThatIsNotAnAbsoluteHttpUrl(String publicUrl) {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new UrlPolicy(publicUrl))
        .withMessageStartingWith("the public URL '" + publicUrl + "' is not usable: url ");
  }
}
