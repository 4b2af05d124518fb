package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link RedirectWebConfig}. */
class RedirectWebConfigTest {

  private static final String PG_URL = "jdbc:postgresql://db.internal:5432/tally";
  private static final String SECRET = "0123456789abcdef";

  /** The three keys without which redirect-web cannot run. */
  private static Map<String, String> required() {
    Map<String, String> env = new HashMap<>();
    env.put("TALLY_PG_URL", PG_URL);
    env.put("TALLY_IP_HASH_SECRET", SECRET);
    env.put("TALLY_API_KEYS", "key-1");
    return env;
  }

  @Test
  void fillsEveryOptionalSettingWithItsDefault() {
    RedirectWebConfig config = RedirectWebConfig.fromEnv(required());

    assertThat(config.httpPort()).isEqualTo(8080);
    assertThat(config.publicUrl()).isEqualTo("http://localhost:8080");
    assertThat(config.jdbcUrl()).isEqualTo(PG_URL);
    assertThat(config.dbUser()).isEqualTo("postgres");
    assertThat(config.dbPassword()).isEmpty();
    assertThat(config.kafkaBootstrap()).isEqualTo("localhost:9092");
    assertThat(config.clickTopic()).isEqualTo("clicks");
    assertThat(config.apiKeys()).containsExactly("key-1");
    assertThat(config.ipHashSecret()).isEqualTo(SECRET);
    assertThat(config.rangeVisitorKeys()).isTrue();
    assertThat(config.trustedProxies()).isEmpty();
    assertThat(config.countryHeader()).isEmpty();
    assertThat(config.geoIpDatabase()).isEmpty();
    assertThat(config.kafkaBufferBytes()).isEqualTo(8L * 1024 * 1024);
    assertThat(config.kafkaMaxBlock()).isEqualTo(Duration.ofMillis(2));
    assertThat(config.kafkaDeliveryTimeout()).isEqualTo(Duration.ofMinutes(10));
    assertThat(config.linkRefresh()).isEqualTo(Duration.ofSeconds(30));
    assertThat(config.linkStaleLimit()).isEqualTo(Duration.ofHours(6));
    assertThat(config.pgLookupTimeout()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void readsEverySetting() {
    Map<String, String> env = required();
    env.put("TALLY_HTTP_PORT", "9090");
    env.put("TALLY_PUBLIC_URL", "https://tly.example");
    env.put("TALLY_PG_USER", "tally");
    env.put("TALLY_PG_PASSWORD", "pw");
    env.put("TALLY_KAFKA_BOOTSTRAP", "k1:9092,k2:9092");
    env.put("TALLY_CLICK_TOPIC", "clicks-v1");
    env.put("TALLY_API_KEYS", " key-1 , key-2,,");
    env.put("TALLY_TRUSTED_PROXIES", "10.0.0.1, 172.16.0.0/12, fd00::/8");
    env.put("TALLY_COUNTRY_HEADER", "CF-IPCountry");
    env.put("TALLY_GEOIP_DB", "/data/country.mmdb");
    env.put("TALLY_KAFKA_BUFFER_BYTES", "65536");
    env.put("TALLY_KAFKA_MAX_BLOCK_MS", " 5 ");
    env.put("TALLY_KAFKA_DELIVERY_TIMEOUT_MS", "30000");
    env.put("TALLY_LINK_REFRESH_MS", "500");
    env.put("TALLY_LINK_STALE_LIMIT_MINUTES", "90");
    env.put("TALLY_PG_LOOKUP_TIMEOUT_MS", "250");
    env.put("TALLY_RANGE_VISITORS", " False ");

    RedirectWebConfig config = RedirectWebConfig.fromEnv(env);

    assertThat(config.httpPort()).isEqualTo(9090);
    assertThat(config.publicUrl()).isEqualTo("https://tly.example");
    assertThat(config.dbUser()).isEqualTo("tally");
    assertThat(config.dbPassword()).isEqualTo("pw");
    assertThat(config.kafkaBootstrap()).isEqualTo("k1:9092,k2:9092");
    assertThat(config.clickTopic()).isEqualTo("clicks-v1");
    assertThat(config.apiKeys()).containsExactlyInAnyOrder("key-1", "key-2");
    assertThat(config.trustedProxies()).isEqualTo(Set.of("10.0.0.1", "172.16.0.0/12", "fd00::/8"));
    assertThat(config.countryHeader()).contains("CF-IPCountry");
    assertThat(config.geoIpDatabase()).contains("/data/country.mmdb");
    assertThat(config.kafkaBufferBytes()).isEqualTo(65536);
    assertThat(config.kafkaMaxBlock()).isEqualTo(Duration.ofMillis(5));
    assertThat(config.kafkaDeliveryTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(config.linkRefresh()).isEqualTo(Duration.ofMillis(500));
    assertThat(config.linkStaleLimit()).isEqualTo(Duration.ofMinutes(90));
    assertThat(config.pgLookupTimeout()).isEqualTo(Duration.ofMillis(250));
    assertThat(config.rangeVisitorKeys()).isFalse();
  }

  @Test
  void readsAnAdminPortApartFromTheHttpPort() {
    Map<String, String> env = required();
    assertThat(RedirectWebConfig.fromEnv(env).adminPort()).isEmpty();

    env.put("TALLY_ADMIN_PORT", "9464");

    assertThat(RedirectWebConfig.fromEnv(env).adminPort()).hasValue(9464);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          8080  | TALLY_ADMIN_PORT must differ from TALLY_HTTP_PORT (8080): leave it unset to serve /health and /metrics on the HTTP port
          70000 | TALLY_ADMIN_PORT must be a port from 0 to 65535, not 70000
          admin | TALLY_ADMIN_PORT must be an integer, not 'admin'
          """)
  void refusesAnAdminPortItCannotUse(String value, String message) {
    Map<String, String> env = required();
    env.put("TALLY_HTTP_PORT", "8080");
    env.put("TALLY_ADMIN_PORT", value);

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessage(message);
  }

  @Test
  void refusesARangeVisitorsSettingThatIsNeitherTrueNorFalse() {
    Map<String, String> env = required();
    env.put("TALLY_RANGE_VISITORS", "off");

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessage("TALLY_RANGE_VISITORS must be true or false, not 'off'");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "TALLY_LINK_REFRESH_MS",
        "TALLY_LINK_STALE_LIMIT_MINUTES",
        "TALLY_PG_LOOKUP_TIMEOUT_MS"
      })
  void refusesATimeThatIsNotPositive(String key) {
    Map<String, String> env = required();
    env.put(key, "0");

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessage(key + " must be at least 1, not 0");
  }

  @Test
  void refusesAStaleLimitThatIsNotLongerThanTheRefreshInterval() {
    // A link would expire before it is ever refreshed: every outage would hit PostgreSQL again.
    Map<String, String> env = required();
    env.put("TALLY_LINK_REFRESH_MS", "120000");
    env.put("TALLY_LINK_STALE_LIMIT_MINUTES", "2");

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessage(
            "TALLY_LINK_STALE_LIMIT_MINUTES (2) must be longer than TALLY_LINK_REFRESH_MS (120000"
                + " ms)");
  }

  @Test
  void defaultsThePublicUrlToTheConfiguredPort() {
    Map<String, String> env = required();
    env.put("TALLY_HTTP_PORT", "9090");

    assertThat(RedirectWebConfig.fromEnv(env).publicUrl()).isEqualTo("http://localhost:9090");
  }

  @ParameterizedTest
  @ValueSource(strings = {"TALLY_PG_URL", "TALLY_IP_HASH_SECRET", "TALLY_API_KEYS"})
  void refusesToStartWithoutARequiredKeyAndNamesIt(String key) {
    Map<String, String> env = required();
    env.remove(key);

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessageStartingWith(key + " is required");
  }

  @Test
  void namesTheFirstMissingKeyOfAnEmptyEnvironment() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(Map.of()))
        .withMessage("TALLY_PG_URL is required (a jdbc:postgresql:// URL)");
  }

  @Test
  void treatsBlankRequiredValuesAsMissing() {
    Map<String, String> env = required();
    env.put("TALLY_PG_URL", "  ");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessageStartingWith("TALLY_PG_URL is required");

    Map<String, String> noKeys = required();
    noKeys.put("TALLY_API_KEYS", " , ,");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(noKeys))
        .withMessage("TALLY_API_KEYS is required: at least one key for the links API");
  }

  @Test
  void refusesAnIpHashSecretShorterThan16Characters() {
    Map<String, String> env = required();
    env.put("TALLY_IP_HASH_SECRET", "fifteen-chars!!");

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessage("TALLY_IP_HASH_SECRET is required, at least 16 characters");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "TALLY_HTTP_PORT",
        "TALLY_KAFKA_BUFFER_BYTES",
        "TALLY_KAFKA_MAX_BLOCK_MS",
        "TALLY_KAFKA_DELIVERY_TIMEOUT_MS"
      })
  void refusesANumberThatIsNotAnInteger(String key) {
    Map<String, String> env = required();
    env.put(key, "8k");

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessage(key + " must be an integer, not '8k'");
  }

  @Test
  void refusesADeliveryTimeoutShorterThanASecond() {
    Map<String, String> env = required();
    env.put("TALLY_KAFKA_DELIVERY_TIMEOUT_MS", "999");

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessage("TALLY_KAFKA_DELIVERY_TIMEOUT_MS must be at least 1000, not 999");
  }

  @Test
  void refusesAPublicUrlThatIsNotAnAbsoluteHttpUrl() {
    Map<String, String> env = required();
    env.put("TALLY_PUBLIC_URL", "tly.example");

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessageStartingWith(
            "TALLY_PUBLIC_URL: the public URL 'tly.example' is not usable: url must be absolute");
  }

  @Test
  void refusesATrustedProxyThatIsNeitherAnAddressNorACidrBlock() {
    Map<String, String> env = required();
    env.put("TALLY_TRUSTED_PROXIES", "10.0.0.1, lb.internal");

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessage("TALLY_TRUSTED_PROXIES: 'lb.internal' is not an IP address or a CIDR block");
  }

  @Test
  void refusesACountryHeaderWithoutATrustedProxyToBelieveItFrom() {
    Map<String, String> env = required();
    env.put("TALLY_COUNTRY_HEADER", "CF-IPCountry");

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessageStartingWith("TALLY_COUNTRY_HEADER needs TALLY_TRUSTED_PROXIES");
  }

  @Test
  void ignoresBlankOptionalHeaders() {
    Map<String, String> env = required();
    env.put("TALLY_COUNTRY_HEADER", " ");
    env.put("TALLY_GEOIP_DB", "");

    RedirectWebConfig config = RedirectWebConfig.fromEnv(env);

    assertThat(config.countryHeader()).isEqualTo(Optional.empty());
    assertThat(config.geoIpDatabase()).isEqualTo(Optional.empty());
  }

  @Test
  void keepsSecretsOutOfItsTextForm() {
    Map<String, String> env = required();
    env.put("TALLY_PG_PASSWORD", "db-password-xyz");
    env.put("TALLY_API_KEYS", "api-key-xyz");

    String text = RedirectWebConfig.fromEnv(env).toString();

    assertThat(text).doesNotContain("db-password-xyz", "api-key-xyz", SECRET).contains("apiKeys=1");
  }
}
