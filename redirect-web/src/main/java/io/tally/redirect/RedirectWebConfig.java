package io.tally.redirect;

import io.tally.event.KafkaSecurity;
import io.tally.redirect.http.ApiKeys;
import io.tally.redirect.stats.StatsAdmission;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Everything redirect-web is configured with, read once from environment variables.
 *
 * <table>
 *   <caption>Environment variables</caption>
 *   <tr><td>TALLY_HTTP_PORT</td><td>HTTP port, default 8080</td></tr>
 *   <tr><td>TALLY_BIND</td><td>the address both ports listen on, default 0.0.0.0 (every interface);
 *       {@code ./tally up} defaults it to 127.0.0.1</td></tr>
 *   <tr><td>TALLY_ADMIN_PORT</td><td>a port of its own for /health and /metrics, which the HTTP port then
 *       no longer serves; default none (both on the HTTP port)</td></tr>
 *   <tr><td>TALLY_PUBLIC_URL</td><td>base of short URLs, default http://localhost:PORT</td></tr>
 *   <tr><td>TALLY_PG_URL, TALLY_PG_USER, TALLY_PG_PASSWORD</td><td>PostgreSQL (JDBC URL)</td></tr>
 *   <tr><td>TALLY_PG_MIGRATE</td><td>whether to migrate the schema at start, default true; false when
 *       TALLY_PG_USER is a login with the least-privilege role {@code tally_redirect_web} and the schema's
 *       owner migrates it beforehand</td></tr>
 *   <tr><td>TALLY_KAFKA_BOOTSTRAP</td><td>Kafka bootstrap servers, default localhost:9092</td></tr>
 *   <tr><td>TALLY_KAFKA_SECURITY_PROTOCOL</td><td>PLAINTEXT (default), SSL, SASL_PLAINTEXT or
 *       SASL_SSL</td></tr>
 *   <tr><td>TALLY_KAFKA_SASL_MECHANISM, TALLY_KAFKA_SASL_USERNAME, TALLY_KAFKA_SASL_PASSWORD</td>
 *       <td>SASL login: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (default)</td></tr>
 *   <tr><td>TALLY_KAFKA_TRUSTSTORE, TALLY_KAFKA_TRUSTSTORE_PASSWORD</td><td>the brokers' CA for TLS
 *       (PKCS12, or JKS by its .jks name); the JVM's CAs when unset</td></tr>
 *   <tr><td>TALLY_CLICK_TOPIC</td><td>click topic, default clicks</td></tr>
 *   <tr><td>TALLY_API_KEYS</td><td>comma-separated API keys, each {@code read:KEY} or {@code write:KEY}
 *       (no scope: write), at least 32 characters (see {@link ApiKeys})</td></tr>
 *   <tr><td>TALLY_IP_HASH_SECRET</td><td>secret for the keyed hash of client addresses, at least 32
 *       bytes</td></tr>
 *   <tr><td>TALLY_LIMIT_UNKNOWN_CODES_PER_MINUTE</td><td>lookups of codes with no link per client address,
 *       default 600; 0 turns the limit off</td></tr>
 *   <tr><td>TALLY_LIMIT_API_PER_MINUTE</td><td>requests to /api/ per client address, default 3000</td></tr>
 *   <tr><td>TALLY_LIMIT_CREATE_PER_MINUTE</td><td>links created per API key, default 600</td></tr>
 *   <tr><td>TALLY_LIMIT_STATS_PER_MINUTE</td><td>stats requests per API key, default 3000</td></tr>
 *   <tr><td>TALLY_BURST_CLICKS_PER_MINUTE</td><td>clicks per minute on one link from one client address
 *       that count as people's; the clicks past it are bot clicks of kind burst (see {@link
 *       ClickBursts}), default 60; 0 turns it off</td></tr>
 *   <tr><td>TALLY_IPV6_CLIENT_PREFIX</td><td>how many leading bits of an IPv6 address make one client for the
 *       limits, 32 to 128, default 64: the network a provider gives one subscriber, who can use any of
 *       its addresses (see {@link RateLimits#addressKey})</td></tr>
 *   <tr><td>TALLY_REDIS_URL</td><td>a Redis (redis://host:port) that every replica keeps its rate-limit
 *       buckets in; without it, each replica limits on its own</td></tr>
 *   <tr><td>TALLY_RANGE_VISITORS</td><td>whether clicks carry the visitor's key across days, for unique
 *       visitors over ranges of days, default true</td></tr>
 *   <tr><td>TALLY_FORWARD_QUERY</td><td>whether a short URL's query string is passed on to the link's
 *       target, merged with the target's own (see {@link ShortUrlQuery}), default true; its campaign
 *       tags are counted either way</td></tr>
 *   <tr><td>TALLY_TRUSTED_PROXIES</td><td>comma-separated addresses or CIDR blocks of the proxies whose
 *       X-Forwarded-For and country header are believed</td></tr>
 *   <tr><td>TALLY_COUNTRY_HEADER</td><td>a header carrying the client's country, e.g. CF-IPCountry, set by a
 *       trusted proxy (needs TALLY_TRUSTED_PROXIES)</td></tr>
 *   <tr><td>TALLY_GEOIP_DB</td><td>path to a MaxMind-format country database</td></tr>
 *   <tr><td>TALLY_KAFKA_BUFFER_BYTES</td><td>producer buffer.memory, default 8388608</td></tr>
 *   <tr><td>TALLY_KAFKA_MAX_BLOCK_MS</td><td>producer max.block.ms, default 2</td></tr>
 *   <tr><td>TALLY_KAFKA_DELIVERY_TIMEOUT_MS</td><td>producer delivery.timeout.ms: how long a buffered click
 *       waits for Kafka before it is dropped, default 600000 (10 minutes), at least 1000</td></tr>
 *   <tr><td>TALLY_MINUTE_RETENTION_DAYS</td><td>days per-minute counts are kept, default 14</td></tr>
 *   <tr><td>TALLY_LINK_REFRESH_MS</td><td>age after which a cached link is read again in the background,
 *       default 30000</td></tr>
 *   <tr><td>TALLY_LINK_STALE_LIMIT_MINUTES</td><td>how long a cached link is still served after its last
 *       successful read, while PostgreSQL is unreachable, default 360</td></tr>
 *   <tr><td>TALLY_PG_LOOKUP_TIMEOUT_MS</td><td>longest a link lookup or health probe waits for PostgreSQL,
 *       default 1000</td></tr>
 *   <tr><td>TALLY_STATS_POOL_SIZE</td><td>connections the stats API and dashboard may hold at once, in a
 *       pool of their own so that they never take the redirects' connections, default 4</td></tr>
 *   <tr><td>TALLY_STATS_CONCURRENCY_PER_KEY</td><td>stats requests one API key may have running at once;
 *       more are answered 429 at once, default 2 (or the pool's size when smaller), at most
 *       TALLY_STATS_POOL_SIZE</td></tr>
 *   <tr><td>TALLY_STATS_STATEMENT_TIMEOUT_MS</td><td>longest PostgreSQL runs one stats query before it
 *       cancels it, default 5000</td></tr>
 * </table>
 */
public record RedirectWebConfig(
    String bindAddress,
    int httpPort,
    String publicUrl,
    String jdbcUrl,
    String dbUser,
    String dbPassword,
    String kafkaBootstrap,
    KafkaSecurity kafkaSecurity,
    String clickTopic,
    ApiKeys apiKeys,
    String ipHashSecret,
    boolean rangeVisitorKeys,
    Set<String> trustedProxies,
    Optional<String> countryHeader,
    Optional<String> geoIpDatabase,
    long kafkaBufferBytes,
    Duration kafkaMaxBlock,
    Duration kafkaDeliveryTimeout,
    int minuteRetentionDays,
    Duration linkRefresh,
    Duration linkStaleLimit,
    Duration pgLookupTimeout,
    int statsPoolSize,
    int statsConcurrencyPerKey,
    Duration statsStatementTimeout,
    OptionalInt adminPort,
    Map<RateLimits.Limit, Long> rateLimits,
    int burstClicksPerMinute,
    int ipv6ClientPrefix,
    Optional<String> redisUrl,
    boolean forwardQuery,
    boolean migrateSchema) {

  public static final int DEFAULT_HTTP_PORT = 8080;

  static final int MIN_SECRET_BYTES = 32;

  /**
   * Limits per minute that no normal client meets: a person mistypes a few codes, a dashboard polls
   * a few requests a second, an integration creates links one at a time.
   */
  static final Map<RateLimits.Limit, Long> DEFAULT_RATE_LIMITS =
      Map.of(
          RateLimits.Limit.UNKNOWN_CODES, 600L,
          RateLimits.Limit.API, 3000L,
          RateLimits.Limit.CREATE, 600L,
          RateLimits.Limit.STATS, 3000L);

  /**
   * How long a click may wait in the producer's buffer for Kafka: the reconciliation's default read
   * slack, so that a click delivered this late is still within reach of {@code tally reconcile}
   * (docs/operations.md, "Kafka outages", has the whole argument).
   */
  public static final Duration DEFAULT_KAFKA_DELIVERY_TIMEOUT = Duration.ofMinutes(10);

  /** Reads the configuration from an environment map such as {@link System#getenv()}. */
  public static RedirectWebConfig fromEnv(Map<String, String> env) {
    int port = intValue(env, "TALLY_HTTP_PORT", DEFAULT_HTTP_PORT);
    OptionalInt adminPort = adminPort(env, port);
    String jdbcUrl = env.get("TALLY_PG_URL");
    if (jdbcUrl == null || jdbcUrl.isBlank()) {
      throw new IllegalArgumentException("TALLY_PG_URL is required (a jdbc:postgresql:// URL)");
    }
    String secret = env.get("TALLY_IP_HASH_SECRET");
    if (secret == null || secret.getBytes(StandardCharsets.UTF_8).length < MIN_SECRET_BYTES) {
      throw new IllegalArgumentException(
          "TALLY_IP_HASH_SECRET is required, at least "
              + MIN_SECRET_BYTES
              + " bytes; "
              + ApiKeys.HOW_TO_MAKE_ONE);
    }
    if (secret.toLowerCase(java.util.Locale.ROOT).contains("change-me")) {
      throw new IllegalArgumentException(
          "TALLY_IP_HASH_SECRET is a placeholder (it contains 'change-me'); "
              + ApiKeys.HOW_TO_MAKE_ONE);
    }
    ApiKeys keys = ApiKeys.parse(env.get("TALLY_API_KEYS"));
    Set<String> trustedProxies = trustedProxies(list(env.get("TALLY_TRUSTED_PROXIES")));
    Optional<String> countryHeader =
        Optional.ofNullable(env.get("TALLY_COUNTRY_HEADER")).filter(s -> !s.isBlank());
    if (countryHeader.isPresent() && trustedProxies.isEmpty()) {
      throw new IllegalArgumentException(
          "TALLY_COUNTRY_HEADER needs TALLY_TRUSTED_PROXIES: the header is believed"
              + " only on requests from a trusted proxy");
    }
    Duration linkRefresh = Duration.ofMillis(positive(env, "TALLY_LINK_REFRESH_MS", 30_000));
    Duration linkStaleLimit =
        Duration.ofMinutes(positive(env, "TALLY_LINK_STALE_LIMIT_MINUTES", 360));
    if (linkStaleLimit.compareTo(linkRefresh) <= 0) {
      throw new IllegalArgumentException(
          "TALLY_LINK_STALE_LIMIT_MINUTES ("
              + linkStaleLimit.toMinutes()
              + ") must be longer than TALLY_LINK_REFRESH_MS ("
              + linkRefresh.toMillis()
              + " ms)");
    }
    int statsPoolSize = positive(env, "TALLY_STATS_POOL_SIZE", 4);
    String publicUrl = env.getOrDefault("TALLY_PUBLIC_URL", "http://localhost:" + port);
    try {
      new UrlPolicy(publicUrl);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("TALLY_PUBLIC_URL: " + e.getMessage());
    }
    return new RedirectWebConfig(
        bindAddress(env),
        port,
        publicUrl,
        jdbcUrl,
        env.getOrDefault("TALLY_PG_USER", "postgres"),
        env.getOrDefault("TALLY_PG_PASSWORD", ""),
        env.getOrDefault("TALLY_KAFKA_BOOTSTRAP", "localhost:9092"),
        KafkaSecurity.of(
            env.get("TALLY_KAFKA_SECURITY_PROTOCOL"),
            env.get("TALLY_KAFKA_SASL_MECHANISM"),
            env.get("TALLY_KAFKA_SASL_USERNAME"),
            env.get("TALLY_KAFKA_SASL_PASSWORD"),
            env.get("TALLY_KAFKA_TRUSTSTORE"),
            env.get("TALLY_KAFKA_TRUSTSTORE_PASSWORD")),
        env.getOrDefault("TALLY_CLICK_TOPIC", "clicks"),
        keys,
        secret,
        booleanValue(env, "TALLY_RANGE_VISITORS", true),
        trustedProxies,
        countryHeader,
        Optional.ofNullable(env.get("TALLY_GEOIP_DB")).filter(s -> !s.isBlank()),
        intValue(env, "TALLY_KAFKA_BUFFER_BYTES", 8 * 1024 * 1024),
        Duration.ofMillis(intValue(env, "TALLY_KAFKA_MAX_BLOCK_MS", 2)),
        deliveryTimeout(
            intValue(
                env,
                "TALLY_KAFKA_DELIVERY_TIMEOUT_MS",
                (int) DEFAULT_KAFKA_DELIVERY_TIMEOUT.toMillis())),
        minuteRetentionDays(intValue(env, "TALLY_MINUTE_RETENTION_DAYS", 14)),
        linkRefresh,
        linkStaleLimit,
        Duration.ofMillis(positive(env, "TALLY_PG_LOOKUP_TIMEOUT_MS", 1000)),
        statsPoolSize,
        statsConcurrencyPerKey(env, statsPoolSize),
        Duration.ofMillis(positive(env, "TALLY_STATS_STATEMENT_TIMEOUT_MS", 5000)),
        adminPort,
        rateLimits(env),
        burstClicksPerMinute(env),
        ipv6ClientPrefix(env),
        Optional.ofNullable(env.get("TALLY_REDIS_URL")).filter(s -> !s.isBlank()).map(String::trim),
        booleanValue(env, "TALLY_FORWARD_QUERY", true),
        booleanValue(env, "TALLY_PG_MIGRATE", true));
  }

  private static Map<RateLimits.Limit, Long> rateLimits(Map<String, String> env) {
    Map<RateLimits.Limit, Long> limits = new java.util.EnumMap<>(RateLimits.Limit.class);
    for (RateLimits.Limit limit : RateLimits.Limit.values()) {
      String key = rateLimitVariable(limit);
      int value = intValue(env, key, DEFAULT_RATE_LIMITS.get(limit).intValue());
      if (value < 0) {
        throw new IllegalArgumentException(key + " must be 0 (off) or more, not " + value);
      }
      limits.put(limit, (long) value);
    }
    return limits;
  }

  private static String bindAddress(Map<String, String> env) {
    String address = env.getOrDefault("TALLY_BIND", "0.0.0.0").trim();
    if (IpLiteral.parse(address).isEmpty() && !address.equals("localhost")) {
      throw new IllegalArgumentException(
          "TALLY_BIND must be an IP address (0.0.0.0 for every interface, 127.0.0.1 for this"
              + " machine only), not '"
              + address
              + "'");
    }
    return address;
  }

  private static int statsConcurrencyPerKey(Map<String, String> env, int poolSize) {
    int perKey =
        positive(
            env,
            "TALLY_STATS_CONCURRENCY_PER_KEY",
            Math.min(StatsAdmission.DEFAULT_PER_KEY, poolSize));
    if (perKey > poolSize) {
      throw new IllegalArgumentException(
          "TALLY_STATS_CONCURRENCY_PER_KEY ("
              + perKey
              + ") must not exceed TALLY_STATS_POOL_SIZE ("
              + poolSize
              + ")");
    }
    return perKey;
  }

  private static int burstClicksPerMinute(Map<String, String> env) {
    int clicks = intValue(env, "TALLY_BURST_CLICKS_PER_MINUTE", ClickBursts.DEFAULT_PER_MINUTE);
    if (clicks < 0) {
      throw new IllegalArgumentException(
          "TALLY_BURST_CLICKS_PER_MINUTE must be 0 (off) or more, not " + clicks);
    }
    return clicks;
  }

  private static int ipv6ClientPrefix(Map<String, String> env) {
    int bits = intValue(env, "TALLY_IPV6_CLIENT_PREFIX", RateLimits.DEFAULT_IPV6_CLIENT_PREFIX);
    if (bits < 32 || bits > 128) {
      throw new IllegalArgumentException(
          "TALLY_IPV6_CLIENT_PREFIX must be from 32 to 128 bits, not " + bits);
    }
    return bits;
  }

  /** The variable that sets a limit, e.g. {@code TALLY_LIMIT_UNKNOWN_CODES_PER_MINUTE}. */
  static String rateLimitVariable(RateLimits.Limit limit) {
    return "TALLY_LIMIT_" + limit.name() + "_PER_MINUTE";
  }

  private static int positive(Map<String, String> env, String key, int fallback) {
    int value = intValue(env, key, fallback);
    if (value < 1) {
      throw new IllegalArgumentException(key + " must be at least 1, not " + value);
    }
    return value;
  }

  private static Set<String> trustedProxies(Set<String> entries) {
    for (String entry : entries) {
      try {
        AddressBlock.parse(entry);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("TALLY_TRUSTED_PROXIES: " + e.getMessage());
      }
    }
    return entries;
  }

  private static Duration deliveryTimeout(int millis) {
    // Shorter would leave the producer no time for one request to a broker that answers slowly.
    if (millis < 1000) {
      throw new IllegalArgumentException(
          "TALLY_KAFKA_DELIVERY_TIMEOUT_MS must be at least 1000, not " + millis);
    }
    return Duration.ofMillis(millis);
  }

  private static int minuteRetentionDays(int days) {
    if (days < 1) {
      throw new IllegalArgumentException(
          "TALLY_MINUTE_RETENTION_DAYS must be at least 1, not " + days);
    }
    return days;
  }

  private static boolean booleanValue(Map<String, String> env, String key, boolean fallback) {
    String value = env.get(key);
    if (value == null || value.isBlank()) {
      return fallback;
    }
    return switch (value.trim().toLowerCase(java.util.Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default ->
          throw new IllegalArgumentException(key + " must be true or false, not '" + value + "'");
    };
  }

  /**
   * {@code TALLY_ADMIN_PORT}: none when unset; 0 takes any free port, as {@code TALLY_HTTP_PORT}
   * does.
   */
  private static OptionalInt adminPort(Map<String, String> env, int httpPort) {
    String value = env.get("TALLY_ADMIN_PORT");
    if (value == null || value.isBlank()) {
      return OptionalInt.empty();
    }
    int port = intValue(env, "TALLY_ADMIN_PORT", 0);
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException(
          "TALLY_ADMIN_PORT must be a port from 0 to 65535, not " + port);
    }
    if (port != 0 && port == httpPort) {
      throw new IllegalArgumentException(
          "TALLY_ADMIN_PORT must differ from TALLY_HTTP_PORT ("
              + httpPort
              + "): leave it unset to serve /health and /metrics on the HTTP port");
    }
    return OptionalInt.of(port);
  }

  private static int intValue(Map<String, String> env, String key, int fallback) {
    String value = env.get(key);
    if (value == null || value.isBlank()) {
      return fallback;
    }
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be an integer, not '" + value + "'");
    }
  }

  private static Set<String> list(String csv) {
    if (csv == null) {
      return Set.of();
    }
    return Arrays.stream(csv.split(","))
        .map(String::trim)
        .filter(s -> !s.isEmpty())
        .collect(Collectors.toUnmodifiableSet());
  }

  @Override
  public String toString() {
    // Secrets never reach a log.
    return "RedirectWebConfig[port="
        + httpPort
        + (adminPort.isPresent() ? ", adminPort=" + adminPort.getAsInt() : "")
        + ", publicUrl="
        + publicUrl
        + ", db="
        + io.tally.schema.ConnectionUrls.redacted(jdbcUrl)
        + ", kafka="
        + kafkaBootstrap
        + " ("
        + kafkaSecurity
        + ")"
        + ", topic="
        + clickTopic
        + ", apiKeys="
        + apiKeys.size()
        + " ("
        + apiKeys.count(ApiKeys.Scope.READ)
        + " read-only)"
        + ", rateLimitsPerMinute="
        + rateLimits
        + ", burstClicksPerMinute="
        + burstClicksPerMinute
        + ", redis="
        + redisUrl.map(io.tally.schema.ConnectionUrls::redacted).orElse("none")
        + ", trustedProxies="
        + List.copyOf(trustedProxies)
        + ", rangeVisitorKeys="
        + rangeVisitorKeys
        + ", forwardQuery="
        + forwardQuery
        + "]";
  }
}
