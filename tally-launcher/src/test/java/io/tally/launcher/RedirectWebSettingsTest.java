package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.redirect.RateLimits;
import io.tally.redirect.RedirectWebConfig;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** What {@code ./tally up} passes from its environment on to redirect-web. */
class RedirectWebSettingsTest {

  @Test
  void passesRedirectWebsOwnSettingsAndEveryLimitAndNothingElse() {
    Map<String, String> shell =
        Map.of(
            "TALLY_LIMIT_STATS_PER_MINUTE", "7",
            "TALLY_LIMIT_UNKNOWN_CODES_PER_MINUTE", "0",
            "TALLY_REDIS_URL", "redis://cache:6379",
            "TALLY_ADMIN_PORT", "9464",
            "TALLY_IPV6_CLIENT_PREFIX", "56",
            "TALLY_HOME", "/srv/tally",
            "PATH", "/usr/bin");

    Map<String, String> passed = LocalStack.passedToRedirectWeb(shell);

    assertThat(passed)
        .containsEntry("TALLY_BIND", "127.0.0.1")
        .containsOnlyKeys(
            "TALLY_BIND",
            "TALLY_LIMIT_STATS_PER_MINUTE",
            "TALLY_LIMIT_UNKNOWN_CODES_PER_MINUTE",
            "TALLY_REDIS_URL",
            "TALLY_ADMIN_PORT",
            "TALLY_IPV6_CLIENT_PREFIX");
    Map<String, String> env = new HashMap<>(passed);
    env.put("TALLY_PG_URL", "jdbc:postgresql://localhost:5432/tally");
    env.put("TALLY_API_KEYS", "write:" + "k".repeat(40));
    env.put("TALLY_IP_HASH_SECRET", "s".repeat(40));
    RedirectWebConfig config = RedirectWebConfig.fromEnv(env);
    assertThat(config.rateLimits())
        .containsEntry(RateLimits.Limit.STATS, 7L)
        .containsEntry(RateLimits.Limit.UNKNOWN_CODES, 0L);
    assertThat(config.redisUrl()).contains("redis://cache:6379");
    assertThat(config.adminPort()).isEqualTo(OptionalInt.of(9464));
    assertThat(config.ipv6ClientPrefix()).isEqualTo(56);
    assertThat(config.bindAddress()).isEqualTo("127.0.0.1");
  }

  @Test
  void listensWhereTallyBindSays() {
    assertThat(LocalStack.passedToRedirectWeb(Map.of("TALLY_BIND", "0.0.0.0")))
        .containsEntry("TALLY_BIND", "0.0.0.0");
  }
}
