package io.tally.redirect;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.tally.schema.ConnectionUrls;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Token buckets that bound what one client may ask of this service, one bucket per limit and
 * client: per client address for unknown codes and for the API, per API key for link creation and
 * for stats. Each limit is a number of requests per minute; a bucket holds that many and refills at
 * that rate, so a client may spend a minute's worth at once, then one as each comes back.
 *
 * <p>Buckets live in this process, so N replicas allow N times a limit, or in Redis when a URL is
 * given, shared by every replica. Redis keys are keyed hashes of the client, so that no address or
 * API key is written there. When Redis fails, the local buckets stand in for it for a second at a
 * time: a request never waits on Redis for more than its timeout, and never fails because of it.
 */
public final class RateLimits implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RateLimits.class);

  /** What is limited, and by whom. */
  public enum Limit {
    /** Lookups of codes with no link, per client address. */
    UNKNOWN_CODES("unknown-codes"),
    /** Requests to {@code /api/}, per client address. */
    API("api"),
    /** Links created, per API key. */
    CREATE("create"),
    /** Stats requests (series, breakdowns, top links, link lists), per API key. */
    STATS("stats");

    private final String policy;

    Limit(String policy) {
      this.policy = policy;
    }

    /** The name of the limit in the RateLimit headers and the metric. */
    public String policy() {
      return policy;
    }
  }

  /** What one request was allowed. */
  public record Verdict(
      Limit limit, long perMinute, boolean allowed, long remaining, long resetSeconds) {

    /** Seconds until a refused client may try again; 0 when allowed. */
    public long retryAfterSeconds() {
      return allowed ? 0 : Math.max(1, resetSeconds);
    }
  }

  private static final Duration WINDOW = Duration.ofMinutes(1);
  private static final long MAX_LOCAL_BUCKETS = 500_000;
  private static final Duration REDIS_TIMEOUT = Duration.ofMillis(250);
  private static final long REDIS_PAUSE_NANOS = Duration.ofSeconds(1).toNanos();

  private final Map<Limit, Long> perMinute;
  private final Map<Limit, BucketConfiguration> configurations = new EnumMap<>(Limit.class);
  private final Cache<String, Bucket> localBuckets;
  private final Map<Limit, Counter> refused = new EnumMap<>(Limit.class);
  private final Counter sharedFailures;
  private final Optional<Shared> shared;

  /** Nanos until which Redis is left alone after a failure; 0 while it answers. */
  private final AtomicLong redisPausedUntil = new AtomicLong();

  /** The Redis side: its client, connection and buckets, and the secret of its keys. */
  private record Shared(
      RedisClient client,
      StatefulRedisConnection<byte[], byte[]> connection,
      ProxyManager<byte[]> buckets,
      SecretKeySpec keySecret) {}

  /**
   * @param perMinute requests per minute of each limit; 0 or absent turns a limit off
   * @param redisUrl when present, the Redis that every replica's buckets live in
   * @param keySecret the secret that Redis keys are hashed with
   */
  public RateLimits(
      Map<Limit, Long> perMinute,
      Optional<String> redisUrl,
      byte[] keySecret,
      MeterRegistry registry) {
    this.perMinute = new EnumMap<>(Limit.class);
    for (Limit limit : Limit.values()) {
      long n = perMinute.getOrDefault(limit, 0L);
      this.perMinute.put(limit, n);
      if (n > 0) {
        configurations.put(
            limit,
            BucketConfiguration.builder()
                .addLimit(b -> b.capacity(n).refillGreedy(n, WINDOW))
                .build());
      }
      refused.put(
          limit,
          Counter.builder("tally.rate.limited")
              .description("requests refused with 429 because their client was over a limit")
              .tag("limit", limit.policy())
              .register(registry));
    }
    // A full bucket is as good as none: one idle for a window is forgotten.
    this.localBuckets =
        Caffeine.newBuilder().maximumSize(MAX_LOCAL_BUCKETS).expireAfterAccess(WINDOW).build();
    this.sharedFailures =
        Counter.builder("tally.rate.limit.redis.failures")
            .description(
                "rate-limit checks that Redis did not answer in time; this replica's own buckets"
                    + " answered them")
            .register(registry);
    this.shared = redisUrl.map(url -> connect(url, keySecret));
  }

  private static Shared connect(String url, byte[] keySecret) {
    RedisURI uri = RedisURI.create(url);
    uri.setTimeout(REDIS_TIMEOUT);
    RedisClient client = RedisClient.create(uri);
    client.setOptions(
        ClientOptions.builder()
            // While disconnected a command fails at once rather than wait for the reconnect.
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
            .build());
    try {
      StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
      ProxyManager<byte[]> buckets =
          Bucket4jLettuce.casBasedBuilder(connection)
              .expirationAfterWrite(
                  ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(
                      Duration.ofSeconds(10)))
              .requestTimeout(REDIS_TIMEOUT)
              .build();
      return new Shared(client, connection, buckets, new SecretKeySpec(keySecret, "HmacSHA256"));
    } catch (RuntimeException e) {
      client.shutdown();
      throw new IllegalArgumentException(
          "TALLY_REDIS_URL: cannot connect to "
              + ConnectionUrls.redacted(url)
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** Whether buckets are shared through Redis. */
  public boolean shared() {
    return shared.isPresent();
  }

  /** Requests per minute of a limit; 0 when it is off. */
  public long perMinute(Limit limit) {
    return perMinute.get(limit);
  }

  /**
   * Takes one request from {@code client}'s bucket of {@code limit}; empty when the limit is off.
   *
   * @param client a client address ({@link #addressKey}) or an API key's id
   */
  public Optional<Verdict> take(Limit limit, String client) {
    BucketConfiguration configuration = configurations.get(limit);
    if (configuration == null) {
      return Optional.empty();
    }
    String key = limit.policy() + ":" + client;
    ConsumptionProbe probe = sharedProbe(key, configuration);
    if (probe == null) {
      probe =
          localBuckets
              .get(key, k -> Bucket.builder().addLimit(configuration.getBandwidths()[0]).build())
              .tryConsumeAndReturnRemaining(1);
    }
    if (!probe.isConsumed()) {
      refused.get(limit).increment();
    }
    long waitNanos =
        probe.isConsumed() ? probe.getNanosToWaitForReset() : probe.getNanosToWaitForRefill();
    return Optional.of(
        new Verdict(
            limit,
            perMinute.get(limit),
            probe.isConsumed(),
            probe.getRemainingTokens(),
            (waitNanos + 999_999_999L) / 1_000_000_000L));
  }

  /** The probe of the shared bucket; null when there is none or Redis cannot answer now. */
  private ConsumptionProbe sharedProbe(String key, BucketConfiguration configuration) {
    if (shared.isEmpty()) {
      return null;
    }
    long paused = redisPausedUntil.get();
    if (paused != 0 && System.nanoTime() - paused < 0) {
      return null;
    }
    try {
      ConsumptionProbe probe =
          shared
              .get()
              .buckets()
              .getProxy(redisKey(key), () -> configuration)
              .tryConsumeAndReturnRemaining(1);
      redisPausedUntil.set(0);
      return probe;
    } catch (RuntimeException e) {
      sharedFailures.increment();
      if (redisPausedUntil.getAndSet(Math.max(1, System.nanoTime() + REDIS_PAUSE_NANOS)) == 0) {
        LOG.warn(
            "Redis did not answer a rate-limit check ({}); this replica's own buckets answer until"
                + " it does",
            e.getMessage());
      }
      return null;
    }
  }

  private byte[] redisKey(String key) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(shared.get().keySecret());
      byte[] digest = Arrays.copyOf(mac.doFinal(key.getBytes(StandardCharsets.UTF_8)), 16);
      return ("tally:rate:" + HexFormat.of().formatHex(digest)).getBytes(StandardCharsets.UTF_8);
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * How many leading bits of an IPv6 address make one client by default: a /64 is the least a
   * provider gives one subscriber (RFC 6177), whose devices pick any address in it, and often
   * change it; limiting single IPv6 addresses would limit nothing.
   */
  public static final int DEFAULT_IPV6_CLIENT_PREFIX = 64;

  /**
   * The client an address stands for: the address itself, or for IPv6 its network of {@code
   * ipv6Prefix} leading bits ({@link #DEFAULT_IPV6_CLIENT_PREFIX}).
   */
  public static String addressKey(String address, int ipv6Prefix) {
    if (address.indexOf(':') < 0) {
      // Only an IPv6 literal has a colon, and only an IPv6 address is cut to its network: this
      // spares every other request the parse.
      return address;
    }
    Optional<InetAddress> parsed = IpLiteral.parse(address);
    if (parsed.isPresent() && parsed.get() instanceof Inet6Address v6) {
      byte[] network = v6.getAddress();
      for (int bit = ipv6Prefix; bit < network.length * 8; bit++) {
        network[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
      }
      return HexFormat.of().formatHex(network, 0, (ipv6Prefix + 7) / 8) + "::/" + ipv6Prefix;
    }
    return address;
  }

  @Override
  public void close() {
    shared.ifPresent(
        s -> {
          s.connection().close();
          s.client().shutdown(Duration.ZERO, Duration.ofSeconds(2));
        });
  }
}
