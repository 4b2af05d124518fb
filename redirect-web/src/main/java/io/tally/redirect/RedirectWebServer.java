package io.tally.redirect;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.javalin.Javalin;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tally.redirect.links.KnownCodes;
import io.tally.redirect.links.LinkCache;
import io.tally.redirect.links.LinkStore;
import io.tally.redirect.stats.StatsStore;
import io.tally.schema.TallySchema;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running redirect-web: the HTTP server with its connection pool, click sink and admin client,
 * closed together. {@link #main} runs it from environment variables (see {@link
 * RedirectWebConfig}).
 */
public final class RedirectWebServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RedirectWebServer.class);

  private final HikariDataSource dataSource;
  private final HikariDataSource statsSource;

  /**
   * How often the set of existing codes is loaded whole, though notifications keep it current: a
   * notification lost without the connection failing would otherwise be missed for ever.
   */
  static final Duration KNOWN_CODES_RELOAD = Duration.ofMinutes(10);

  /** How long a stats request waits for a free stats connection before it is answered 503. */
  static final Duration STATS_CONNECTION_WAIT = Duration.ofMillis(500);

  private final ClickSink clicks;
  private final Admin admin;
  private final CountryResolver countries;
  private final ScheduledExecutorService housekeeping;
  private final Readiness readiness;
  private final LinkCache linkCache;
  private final KnownCodes knownCodes;
  private final RateLimits rateLimits;
  private final Javalin app;
  private final Javalin adminApp;

  private RedirectWebServer(
      HikariDataSource dataSource,
      HikariDataSource statsSource,
      ClickSink clicks,
      Admin admin,
      CountryResolver countries,
      ScheduledExecutorService housekeeping,
      Readiness readiness,
      LinkCache linkCache,
      KnownCodes knownCodes,
      RateLimits rateLimits,
      Javalin app,
      Javalin adminApp) {
    this.dataSource = dataSource;
    this.statsSource = statsSource;
    this.clicks = clicks;
    this.admin = admin;
    this.countries = countries;
    this.housekeeping = housekeeping;
    this.readiness = readiness;
    this.linkCache = linkCache;
    this.knownCodes = knownCodes;
    this.rateLimits = rateLimits;
    this.app = app;
    this.adminApp = adminApp;
  }

  /**
   * Migrates the schema, connects to PostgreSQL and Kafka, and starts listening on the configured
   * port, each click handed to Kafka ({@link ClickPublisher}).
   */
  public static RedirectWebServer start(RedirectWebConfig config) {
    return start(
        config,
        (c, linkDatabase, registry) ->
            ClickPublisher.create(
                c, registry, () -> SendDrops.start(linkDatabase, c.kafkaDeliveryTimeout())));
  }

  /**
   * Starts as {@link #start(RedirectWebConfig)} does, with the click sink that {@code clickSinks}
   * opens in place of Kafka's: for a benchmark that compares the redirect's cost with other ways of
   * counting. The sink is opened once the pools are, and closed with the server.
   */
  public static RedirectWebServer start(RedirectWebConfig config, ClickSink.Factory clickSinks) {
    if (config.migrateSchema()) {
      TallySchema.migrate(config.jdbcUrl(), config.dbUser(), config.dbPassword());
    }
    // Whatever was opened is closed again if a later step fails, so a failed start leaks nothing.
    Deque<AutoCloseable> opened = new ArrayDeque<>();
    try {
      HikariDataSource dataSource = new HikariDataSource(redirectPool(config));
      opened.push(dataSource);
      HikariDataSource statsSource = new HikariDataSource(statsPool(config));
      opened.push(statsSource);

      PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      new JvmMemoryMetrics().bindTo(registry);
      new JvmGcMetrics().bindTo(registry);
      new JvmThreadMetrics().bindTo(registry);

      ClickSink clicks = clickSinks.open(config, dataSource, registry);
      opened.push(clicks);
      Map<String, Object> adminSettings =
          new HashMap<>(
              Map.of(
                  AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, config.kafkaBootstrap(),
                  AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 1000,
                  AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 1500));
      adminSettings.putAll(config.kafkaSecurity().clientProperties());
      Admin admin = Admin.create(adminSettings);
      opened.push(admin);
      CountryResolver countries =
          config
              .geoIpDatabase()
              .map(path -> CountryResolver.withDatabase(Path.of(path)))
              .orElseGet(CountryResolver::headerOnly);
      opened.push(countries);
      VisitorSalts salts = new VisitorSalts(dataSource, Clock.systemUTC());
      // Today's and tomorrow's salts are in memory before the first redirect, and refreshed well
      // before midnight.
      salts.refresh();
      Retention retention =
          new Retention(dataSource, Clock.systemUTC(), config.minuteRetentionDays());
      ScheduledExecutorService housekeeping = housekeeping(salts, retention);
      opened.push(housekeeping::shutdownNow);
      ClickEventFactory events =
          new ClickEventFactory(
              new ClientAddress(config.trustedProxies()),
              new VisitorHasher(config.ipHashSecret(), salts::saltOf, registry),
              config.rangeVisitorKeys(),
              countries,
              new ClickBursts(config.burstClicksPerMinute(), config.ipv6ClientPrefix(), registry),
              registry);
      LinkStore linkStore = new LinkStore(dataSource, config.pgLookupTimeout());
      Readiness readiness =
          Readiness.probing(linkStore::reachable, () -> brokerUp(admin), Readiness.PROBE_EVERY);
      opened.push(readiness);
      LinkCache linkCache =
          new LinkCache(linkStore, registry, config.linkRefresh(), config.linkStaleLimit());
      opened.push(linkCache);
      KnownCodes knownCodes =
          KnownCodes.start(
              () -> listenerConnection(config),
              KNOWN_CODES_RELOAD,
              linkCache::changedElsewhere,
              registry);
      opened.push(knownCodes);
      // Until the set is loaded every code is looked up in PostgreSQL, as it was without it.
      knownCodes.awaitCurrent(Duration.ofSeconds(30));
      RateLimits rateLimits =
          new RateLimits(
              config.rateLimits(),
              config.redisUrl(),
              config.ipHashSecret().getBytes(java.nio.charset.StandardCharsets.UTF_8),
              registry);
      opened.push(rateLimits);
      RedirectWebApp web =
          new RedirectWebApp(
              config,
              linkStore,
              linkCache,
              knownCodes,
              rateLimits,
              clicks,
              events,
              new StatsStore(statsSource),
              registry,
              readiness);
      Javalin app = web.create().start(config.bindAddress(), config.httpPort());
      opened.push(app::stop);
      Javalin adminApp =
          config.adminPort().isPresent()
              ? web.createAdmin().start(config.bindAddress(), config.adminPort().getAsInt())
              : app;
      warnOfShadowedLinks(linkStore, web.reservedCodes(), registry);
      Thread warmUp = new Thread(() -> clicks.warmUp(Duration.ofSeconds(30)), "click-sink-warm-up");
      warmUp.setDaemon(true);
      warmUp.start();
      LOG.info(
          "redirect-web listening on port {} (health and metrics on {}) with {}",
          app.port(),
          adminApp.port(),
          config);
      return new RedirectWebServer(
          dataSource,
          statsSource,
          clicks,
          admin,
          countries,
          housekeeping,
          readiness,
          linkCache,
          knownCodes,
          rateLimits,
          app,
          adminApp);
    } catch (RuntimeException | Error e) {
      while (!opened.isEmpty()) {
        try {
          opened.pop().close();
        } catch (Exception suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
  }

  /** The connections of redirects, link creation and housekeeping. */
  private static HikariConfig redirectPool(RedirectWebConfig config) {
    HikariConfig pool = pool(config, "redirect-web", 32);
    // A redirect that misses the cache answers 503 after this rather than hang for Hikari's default
    // 30 s.
    pool.setConnectionTimeout(1_000);
    // Checking an idle connection before handing it out: as long as the wait for one, not Hikari's
    // 5 s.
    pool.setValidationTimeout(1_000);
    // A server that stops answering without closing the connection (paused, or a network partition)
    // would hold a query for ever: no statement on these connections waits longer than this for a
    // reply. Link lookups set a much shorter bound of their own (TALLY_PG_LOOKUP_TIMEOUT_MS); this
    // one is for link creation and housekeeping. Seconds, as pgjdbc takes them.
    pool.addDataSourceProperty("socketTimeout", "30");
    return pool;
  }

  /** One daemon thread that refreshes the visitor salts and applies the retention. */
  private static ScheduledExecutorService housekeeping(VisitorSalts salts, Retention retention) {
    ScheduledExecutorService housekeeping =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "housekeeping");
              t.setDaemon(true);
              return t;
            });
    housekeeping.scheduleWithFixedDelay(salts::refresh, 10, 10, TimeUnit.MINUTES);
    housekeeping.scheduleWithFixedDelay(retention::apply, 1, 60, TimeUnit.MINUTES);
    return housekeeping;
  }

  public int port() {
    return app.port();
  }

  /**
   * The port of {@code /health} and {@code /metrics}: the admin port when set, else {@link #port}.
   */
  public int adminPort() {
    return adminApp.port();
  }

  /** The running app, whose routes a test holds to the API's description. */
  Javalin app() {
    return app;
  }

  /**
   * Waits, at most {@code patience}, until the click sink is ready: for Kafka's, until the producer
   * knows the click topic's partitions. Redirects never wait for this (a click before it is dropped
   * and counted as {@code metadata_unavailable}); a launcher that started Kafka itself calls it so
   * that the first clicks after "up" are counted.
   */
  public void awaitClickTopic(Duration patience) {
    clicks.warmUp(patience);
  }

  private static boolean brokerUp(Admin admin) {
    try {
      return !admin.describeCluster().nodes().get(1500, TimeUnit.MILLISECONDS).isEmpty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      return false;
    }
  }

  @Override
  public void close() {
    if (adminApp != app) {
      adminApp.stop();
    }
    app.stop();
    knownCodes.close();
    rateLimits.close();
    linkCache.close();
    housekeeping.shutdownNow();
    readiness.close();
    clicks.close();
    admin.close(Duration.ofSeconds(2));
    countries.close();
    statsSource.close();
    dataSource.close();
  }

  /**
   * The stats API's and dashboard's own connections, apart from the redirects': a burst of heavy
   * reads (a dozen dashboards polling, a scan of every link) waits for one of these few, and is
   * answered 503 after a short wait, instead of taking the connections an uncached redirect needs.
   * PostgreSQL cancels any statement on them after the stats statement timeout, so none holds a
   * connection for long.
   */
  private static HikariConfig statsPool(RedirectWebConfig config) {
    HikariConfig pool = pool(config, "redirect-web-stats", config.statsPoolSize());
    pool.setConnectionTimeout(STATS_CONNECTION_WAIT.toMillis());
    pool.setValidationTimeout(250);
    pool.setReadOnly(true);
    pool.addDataSourceProperty(
        "options", "-c statement_timeout=" + config.statsStatementTimeout().toMillis());
    // A paused or partitioned server: give up a little after PostgreSQL itself would have
    // cancelled.
    pool.addDataSourceProperty(
        "socketTimeout", String.valueOf(config.statsStatementTimeout().toSeconds() + 5));
    return pool;
  }

  /**
   * The connection that listens for link changes, apart from the pools: it is held for as long as
   * the server runs, and a pool's connection is returned and reused.
   */
  private static Connection listenerConnection(RedirectWebConfig config) throws SQLException {
    Properties properties = new Properties();
    properties.setProperty("user", config.dbUser());
    properties.setProperty("password", config.dbPassword());
    properties.setProperty("connectTimeout", "2");
    // Longer than any batch of the whole-set load takes; the listener checks a quiet connection
    // itself.
    properties.setProperty("socketTimeout", "60");
    properties.setProperty("ApplicationName", "redirect-web-codes");
    return DriverManager.getConnection(config.jdbcUrl(), properties);
  }

  /** A pool of {@code size} connections to the configured database, each opened within 2 s. */
  private static HikariConfig pool(RedirectWebConfig config, String name, int size) {
    HikariConfig pool = new HikariConfig();
    pool.setJdbcUrl(config.jdbcUrl());
    pool.setUsername(config.dbUser());
    pool.setPassword(config.dbPassword());
    pool.setMaximumPoolSize(size);
    pool.addDataSourceProperty("connectTimeout", "2");
    // pg_stat_activity says whose each connection is.
    pool.addDataSourceProperty("ApplicationName", name);
    pool.setPoolName(name);
    return pool;
  }

  public static void main(String[] args) {
    RedirectWebServer server = start(RedirectWebConfig.fromEnv(System.getenv()));
    Runtime.getRuntime().addShutdownHook(new Thread(server::close, "redirect-web-shutdown"));
  }

  /**
   * Links created before a route took their code can no longer be followed: the route answers
   * first. Each start says so, with what to do, and {@code tally.links.shadowed} counts them for an
   * alert.
   */
  private static void warnOfShadowedLinks(
      LinkStore links, Set<String> reservedCodes, PrometheusMeterRegistry registry) {
    List<String> shadowed = links.enabledAmong(reservedCodes);
    Gauge.builder("tally.links.shadowed", shadowed::size)
        .description("enabled links whose code is a path the app answers itself, found at start")
        .register(registry);
    for (String code : shadowed) {
      LOG.warn(
          "link '{}' can no longer be followed: the app answers /{} itself. Create a link to the"
              + " same URL under another code (POST /api/links), share that one, then disable this"
              + " one (DELETE /api/links/{}); its clicks and stats stay readable",
          code,
          code,
          code);
    }
  }
}
