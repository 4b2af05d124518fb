package io.tally.redirect.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Tests for {@link ResponseBodies}. */
class ResponseBodiesTest {

  static Stream<Arguments> fields() {
    return Stream.of(
        Arguments.of("news.example", "news.example"),
        Arguments.of("", ""),
        Arguments.of("a=b", "a=b"),
        Arguments.of("news, \"daily\"", "\"news, \"\"daily\"\"\""),
        Arguments.of("=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""),
        Arguments.of("+1", "\"'+1\""),
        Arguments.of("-2+3", "\"'-2+3\""),
        Arguments.of("@SUM(A1)", "\"'@SUM(A1)\""),
        Arguments.of("\tcmd", "\"'\tcmd\""),
        Arguments.of("\rcmd", "\"'\rcmd\""));
  }

  @ParameterizedTest
  @MethodSource("fields")
  void quotesWhatCsvNeedsAndDisarmsWhatASpreadsheetWouldRun(String value, String field) {
    assertThat(ResponseBodies.csvField(value)).isEqualTo(field);
  }
}
