package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.schema.ConnectionUrls;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Tests for {@link ConnectionUrls}, which every log line that names a database goes through. */
class ConnectionUrlsTest {

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "jdbc:postgresql://db:5432/tally | jdbc:postgresql://db:5432/tally",
        "jdbc:postgresql://db/tally?user=u&password=s3cret |"
            + " jdbc:postgresql://db/tally?user=u&password=***",
        "jdbc:postgresql://db/tally?password=s3cret&ssl=true |"
            + " jdbc:postgresql://db/tally?password=***&ssl=true",
        "jdbc:postgresql://db/tally?PASSWORD=s3cret | jdbc:postgresql://db/tally?PASSWORD=***",
        "jdbc:postgresql://db/tally?sslpassword=s3cret |"
            + " jdbc:postgresql://db/tally?sslpassword=***",
        "redis://:s3cret@redis:6379 | redis://:***@redis:6379",
        "redis://user:s3cret@redis:6379/0 | redis://user:***@redis:6379/0",
        "redis://redis:6379 | redis://redis:6379"
      })
  void hidesEveryPasswordAndKeepsTheRest(String url, String logged) {
    assertThat(ConnectionUrls.redacted(url)).isEqualTo(logged).doesNotContain("s3cret");
  }
}
