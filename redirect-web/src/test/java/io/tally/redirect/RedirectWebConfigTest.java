package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.tally.redirect.http.ApiKeys;
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
  private static final String SECRET = "0123456789abcdef0123456789abcdef";
  private static final String KEY_1 = "key-1-0123456789abcdefghijklmnopqrstuv";
  private static final String KEY_2 = "key-2-0123456789abcdefghijklmnopqrstuv";

  /** The three keys without which redirect-web cannot run. */
  private static Map<String, String> required() {
    Map<String, String> env = new HashMap<>();
    env.put("TALLY_PG_URL", PG_URL);
    env.put("TALLY_IP_HASH_SECRET", SECRET);
    env.put("TALLY_API_KEYS", KEY_1);
    return env;
  }

  @Test
  void fillsEveryOptionalSettingWithItsDefault() {
    RedirectWebConfig config = RedirectWebConfig.fromEnv(required());

    assertThat(config.bindAddress()).isEqualTo("0.0.0.0");
    assertThat(config.httpPort()).isEqualTo(8080);
    assertThat(config.publicUrl()).isEqualTo("http://localhost:8080");
    assertThat(config.jdbcUrl()).isEqualTo(PG_URL);
    assertThat(config.dbUser()).isEqualTo("postgres");
    assertThat(config.dbPassword()).isEmpty();
    assertThat(config.kafkaBootstrap()).isEqualTo("localhost:9092");
    assertThat(config.clickTopic()).isEqualTo("clicks");
    assertThat(config.apiKeys().size()).isEqualTo(1);
    assertThat(config.apiKeys().scopeOf(KEY_1)).contains(ApiKeys.Scope.WRITE);
    assertThat(config.rateLimits()).isEqualTo(RedirectWebConfig.DEFAULT_RATE_LIMITS);
    assertThat(config.redisUrl()).isEmpty();
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
    assertThat(config.ipv6ClientPrefix()).isEqualTo(64);
    assertThat(config.burstClicksPerMinute()).isEqualTo(ClickBursts.DEFAULT_PER_MINUTE);
  }

  @Test
  void limitsEachKeysRunningStatsRequestsToTwoOrToThePoolWhenItIsSmaller() {
    Map<String, String> env = required();
    assertThat(RedirectWebConfig.fromEnv(env).statsConcurrencyPerKey()).isEqualTo(2);
    env.put("TALLY_STATS_POOL_SIZE", "1");
    assertThat(RedirectWebConfig.fromEnv(env).statsConcurrencyPerKey()).isEqualTo(1);
    env.put("TALLY_STATS_CONCURRENCY_PER_KEY", "3");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessageContaining("must not exceed TALLY_STATS_POOL_SIZE (1)");
  }

  @Test
  void readsTheBurstRateAndRefusesANegativeOne() {
    Map<String, String> env = required();
    env.put("TALLY_BURST_CLICKS_PER_MINUTE", "0");
    assertThat(RedirectWebConfig.fromEnv(env).burstClicksPerMinute()).isZero();
    env.put("TALLY_BURST_CLICKS_PER_MINUTE", "-1");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessageContaining("TALLY_BURST_CLICKS_PER_MINUTE must be 0 (off) or more");
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
    env.put("TALLY_API_KEYS", " " + KEY_1 + " , read:" + KEY_2 + ",,");
    env.put("TALLY_LIMIT_UNKNOWN_CODES_PER_MINUTE", "10");
    env.put("TALLY_LIMIT_API_PER_MINUTE", "0");
    env.put("TALLY_LIMIT_CREATE_PER_MINUTE", "20");
    env.put("TALLY_LIMIT_STATS_PER_MINUTE", "30");
    env.put("TALLY_REDIS_URL", "redis://redis:6379");
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
    env.put("TALLY_IPV6_CLIENT_PREFIX", "56");
    env.put("TALLY_BIND", " ::1 ");

    RedirectWebConfig config = RedirectWebConfig.fromEnv(env);

    assertThat(config.httpPort()).isEqualTo(9090);
    assertThat(config.publicUrl()).isEqualTo("https://tly.example");
    assertThat(config.dbUser()).isEqualTo("tally");
    assertThat(config.dbPassword()).isEqualTo("pw");
    assertThat(config.kafkaBootstrap()).isEqualTo("k1:9092,k2:9092");
    assertThat(config.clickTopic()).isEqualTo("clicks-v1");
    assertThat(config.apiKeys().scopeOf(KEY_1)).contains(ApiKeys.Scope.WRITE);
    assertThat(config.apiKeys().scopeOf(KEY_2)).contains(ApiKeys.Scope.READ);
    assertThat(config.rateLimits())
        .containsEntry(RateLimits.Limit.UNKNOWN_CODES, 10L)
        .containsEntry(RateLimits.Limit.API, 0L)
        .containsEntry(RateLimits.Limit.CREATE, 20L)
        .containsEntry(RateLimits.Limit.STATS, 30L);
    assertThat(config.redisUrl()).contains("redis://redis:6379");
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
    assertThat(config.ipv6ClientPrefix()).isEqualTo(56);
    assertThat(config.bindAddress()).isEqualTo("::1");
  }

  @Test
  void refusesABindAddressThatIsNoAddress() {
    Map<String, String> env = required();
    env.put("TALLY_BIND", "example.com");

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessageStartingWith("TALLY_BIND must be an IP address");
  }

  @ParameterizedTest
  @ValueSource(strings = {"16", "129"})
  void refusesAnIpv6ClientPrefixOutsideWhatMakesOneClient(String bits) {
    Map<String, String> env = required();
    env.put("TALLY_IPV6_CLIENT_PREFIX", bits);

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessage("TALLY_IPV6_CLIENT_PREFIX must be from 32 to 128 bits, not " + bits);
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
        .withMessageStartingWith("TALLY_API_KEYS is required: at least one key for the links API");
  }

  @Test
  void refusesAnIpHashSecretShorterThan32BytesOrAPlaceholderAndSaysHowToMakeOne() {
    Map<String, String> env = required();
    env.put("TALLY_IP_HASH_SECRET", "thirty-one-bytes-0123456789abcd");

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessage(
            "TALLY_IP_HASH_SECRET is required, at least 32 bytes; make one with: openssl rand"
                + " -base64 32");

    env.put("TALLY_IP_HASH_SECRET", "dev-secret-change-me-0123456789abcdef");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessageContaining("placeholder");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "short-key-0123456789abcdefghijk | key 1 has 31 characters, fewer than 32",
        "dev-key-change-me-0123456789abcdefgh | key 1 is a placeholder",
        "admin:key-0123456789abcdefghijklmnopqrstuv | key 1 has the scope 'admin'",
        "key-0123456789abcdefghijklmnopqrstuv<> | key 1 may hold only letters"
      })
  void refusesAWeakOrMalformedApiKeyWithoutShowingIt(String keys, String message) {
    Map<String, String> env = required();
    env.put("TALLY_API_KEYS", keys);

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessageStartingWith("TALLY_API_KEYS: " + message)
        .withMessageNotContaining("0123456789abcdef");
  }

  @Test
  void refusesANegativeRateLimit() {
    Map<String, String> env = required();
    env.put("TALLY_LIMIT_STATS_PER_MINUTE", "-1");

    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(env))
        .withMessage("TALLY_LIMIT_STATS_PER_MINUTE must be 0 (off) or more, not -1");
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
    env.put("TALLY_PG_URL", PG_URL + "?user=tally&password=url-password-xyz");
    env.put("TALLY_REDIS_URL", "redis://:redis-password-xyz@redis:6379");
    env.put("TALLY_API_KEYS", "read:" + KEY_1);

    String text = RedirectWebConfig.fromEnv(env).toString();

    assertThat(text)
        .doesNotContain("db-password-xyz", "url-password-xyz", "redis-password-xyz", KEY_1, SECRET)
        .contains("apiKeys=1 (1 read-only)", "password=***", "redis://:***@redis:6379");
  }
}
