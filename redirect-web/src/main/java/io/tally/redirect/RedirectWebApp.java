package io.tally.redirect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.Javalin;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.javalin.http.Handler;
import io.javalin.http.Header;
import io.javalin.http.HttpStatus;
import io.javalin.http.NotFoundResponse;
import io.javalin.http.staticfiles.Location;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tally.event.ClickEvent;
import io.tally.event.ClickIds;
import io.tally.event.LinkCodes;
import io.tally.redirect.http.ApiException;
import io.tally.redirect.http.ApiKeys;
import io.tally.redirect.http.ResponseBodies;
import io.tally.redirect.links.KnownCodes;
import io.tally.redirect.links.Link;
import io.tally.redirect.links.LinkCache;
import io.tally.redirect.links.LinkChange;
import io.tally.redirect.links.LinkCodeGenerator;
import io.tally.redirect.links.LinkStore;
import io.tally.redirect.links.LinkTags;
import io.tally.redirect.stats.StatsAdmission;
import io.tally.redirect.stats.StatsApi;
import io.tally.redirect.stats.StatsRange;
import io.tally.redirect.stats.StatsStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP face of Tally: the links and stats APIs and their description, the public redirect,
 * metrics and health. {@link #create} builds the Javalin app without starting it, so tests and the
 * launcher decide where it listens.
 */
public final class RedirectWebApp {

  private static final Logger LOG = LoggerFactory.getLogger(RedirectWebApp.class);

  /** Request bodies above this are refused: a link is a URL and a code, nothing more. */
  static final int MAX_BODY_BYTES = 8 * 1024;

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int CODE_ATTEMPTS = 5;

  /** The fields of a link that {@code PATCH /api/links/{code}} changes. */
  private static final Set<String> CHANGEABLE = Set.of("url", "tags", "expires_at");

  /**
   * The chart library the dashboard loads, from its webjar on the classpath: never fetched from
   * outside.
   */
  static final String CHART_JS = webjarFile("org.webjars.npm", "chart.js", "dist/chart.umd.js");

  /** The API's description, written by hand and held to the routes by a test. */
  static final String OPENAPI_DOCUMENT = "openapi/tally-openapi.json";

  /**
   * The files of Swagger UI that {@code /api/docs} loads, by the name it loads them under: from
   * their webjar, like the dashboard's chart library, and the page's own start-up script.
   */
  private static final Map<String, String> API_DOCS_FILES =
      Map.of(
          "swagger-ui-bundle.js", webjarFile("org.webjars", "swagger-ui", "swagger-ui-bundle.js"),
          "swagger-ui.css", webjarFile("org.webjars", "swagger-ui", "swagger-ui.css"),
          "docs.js", "openapi/docs.js");

  private final RedirectWebConfig config;
  private final LinkStore links;
  private final LinkCache cache;
  private final KnownCodes knownCodes;
  private final RateLimits rateLimits;
  private final ClientAddress clientAddress;
  private final ClickSink clicks;
  private final ClickEventFactory events;
  private final PrometheusMeterRegistry registry;
  private final Readiness readiness;
  private final StatsApi stats;
  private final StatsAdmission statsAdmission;
  private final UrlPolicy urlPolicy;
  private final LinkCodeGenerator codes = new LinkCodeGenerator();
  private final Timer redirectLatency;
  private final Map<Integer, Counter> redirectsByStatus = new ConcurrentHashMap<>();

  /** The 410s, by why the link is gone: disabled, or past its expiry. */
  private final Counter goneDisabled;

  private final Counter goneExpired;
  private volatile Set<String> reservedCodes = Set.of();

  public RedirectWebApp(
      RedirectWebConfig config,
      LinkStore links,
      LinkCache cache,
      KnownCodes knownCodes,
      RateLimits rateLimits,
      ClickSink clicks,
      ClickEventFactory events,
      StatsStore statsStore,
      PrometheusMeterRegistry registry,
      Readiness readiness) {
    this.config = config;
    this.links = links;
    this.cache = cache;
    this.knownCodes = knownCodes;
    this.rateLimits = rateLimits;
    this.clientAddress = new ClientAddress(config.trustedProxies());
    this.clicks = clicks;
    this.events = events;
    this.registry = registry;
    this.readiness = readiness;
    this.urlPolicy = new UrlPolicy(config.publicUrl());
    this.statsAdmission =
        new StatsAdmission(
            config.statsConcurrencyPerKey(), Math.max(1, config.statsPoolSize() / 4), registry);
    this.stats =
        new StatsApi(
            statsStore,
            config.apiKeys(),
            this::findLink,
            this::linkJson,
            statsAdmission,
            Clock.systemUTC(),
            Duration.ofDays(config.minuteRetentionDays()),
            Duration.ofDays(Retention.HOUR_DAYS));
    this.redirectLatency =
        Timer.builder("tally.redirect.latency")
            .description("time to answer a redirect, counting included")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofNanos(10_000))
            .maximumExpectedValue(Duration.ofSeconds(5))
            .register(registry);
    for (int status : new int[] {302, 404, 410, 429}) {
      redirectCounter(status);
    }
    this.goneDisabled = goneCounter("disabled");
    this.goneExpired = goneCounter("expired");
  }

  /**
   * Builds the app of {@code /health} and {@code /metrics} alone, for {@code TALLY_ADMIN_PORT}: a
   * port that load balancers, probes and Prometheus reach and the internet does not, so a flood of
   * public requests never stands between them and the answer.
   */
  public Javalin createAdmin() {
    return Javalin.create(
        cfg -> {
          cfg.startup.showJavalinBanner = false;
          adminRoutes(cfg);
        });
  }

  private void adminRoutes(JavalinConfig cfg) {
    cfg.routes.get("/health", this::health);
    cfg.routes.get("/metrics", this::metrics);
  }

  /**
   * Builds the app with every route, {@code /health} and {@code /metrics} among them unless they
   * have a port of their own ({@link #createAdmin}); call {@code start(port)} on the result.
   */
  public Javalin create() {
    Javalin app =
        Javalin.create(
            cfg -> {
              cfg.http.maxRequestSize = 1024 * 1024;
              cfg.startup.showJavalinBanner = false;
              cfg.staticFiles.add(
                  files -> {
                    files.hostedPath = "/dashboard";
                    files.directory = "/dashboard";
                    files.location = Location.CLASSPATH;
                  });
              cfg.routes.before(RedirectWebApp::securityHeaders);
              cfg.routes.before("/api/*", this::limitApi);
              // Routes match before static files, and before "/{code}" only when declared first.
              cfg.routes.get("/dashboard", this::dashboard);
              cfg.routes.get(
                  "/dashboard/vendor/chart.umd.js",
                  ctx -> resource(ctx, CHART_JS, "text/javascript; charset=utf-8"));
              cfg.routes.get(
                  "/api/openapi.json", ctx -> resource(ctx, OPENAPI_DOCUMENT, "application/json"));
              cfg.routes.get(
                  "/api/docs",
                  ctx -> resource(ctx, "openapi/docs.html", "text/html; charset=utf-8"));
              API_DOCS_FILES.forEach(
                  (name, path) ->
                      cfg.routes.get(
                          "/api/docs/" + name, ctx -> resource(ctx, path, contentType(name))));
              if (config.adminPort().isEmpty()) {
                adminRoutes(cfg);
              }
              cfg.routes.get("/api/key", this::describeKey);
              cfg.routes.post("/api/links", this::createLink);
              cfg.routes.get("/api/links", timedStats("links", stats::listLinks));
              cfg.routes.get("/api/links/{code}", this::getLink);
              cfg.routes.get("/api/links/{code}/stats", timedStats("series", stats::series));
              cfg.routes.get("/api/links/{code}/audit", timedStats("audit", stats::audit));
              cfg.routes.get(
                  "/api/links/{code}/breakdown", timedStats("breakdown", stats::breakdown));
              cfg.routes.get("/api/top", timedStats("top", stats::top));
              cfg.routes.get("/api/tags", timedStats("tags", stats::tags));
              cfg.routes.delete("/api/links/{code}", this::disableLink);
              cfg.routes.patch("/api/links/{code}", this::changeLink);
              cfg.routes.get("/{code}", ctx -> redirect(ctx, false));
              cfg.routes.head("/{code}", ctx -> redirect(ctx, true));
              cfg.routes.exception(
                  ApiException.class, (e, ctx) -> error(ctx, e.status(), e.getMessage()));
              cfg.routes.exception(
                  RateLimited.class,
                  (e, ctx) -> {
                    rateLimitHeaders(ctx, e.verdict());
                    error(ctx, 429, e.getMessage());
                  });
              cfg.routes.exception(
                  StatsAdmission.Busy.class,
                  (e, ctx) -> {
                    ctx.header(Header.RETRY_AFTER, "1");
                    error(ctx, 429, e.getMessage());
                  });
              cfg.routes.exception(
                  StatsStore.Overloaded.class,
                  (e, ctx) -> {
                    ctx.header(Header.RETRY_AFTER, "1");
                    error(ctx, 503, e.getMessage());
                  });
              cfg.routes.exception(
                  LinkStore.StoreException.class,
                  (e, ctx) -> {
                    // One line, no trace: during an outage every uncached code lands here.
                    LOG.warn(
                        "database failure on {} {}: {}", ctx.method(), ctx.path(), e.getMessage());
                    error(ctx, 503, "the link database is unavailable");
                  });
              // Javalin answers an unmatched route by throwing NotFoundResponse, whose default
              // mapper writes plain text before error handlers run; map it here so every error is
              // JSON.
              cfg.routes.exception(
                  NotFoundResponse.class, (e, ctx) -> error(ctx, 404, "no such route"));
              cfg.routes.error(
                  404,
                  ctx -> {
                    if (ctx.result() == null) {
                      error(ctx, 404, "no such route");
                    }
                  });
              cfg.routes.error(405, ctx -> error(ctx, 405, "method not allowed"));
            });
    reservedCodes = routePrefixes(app);
    return app;
  }

  /**
   * The codes a link must not have: the first path segment of every route of the app itself, since
   * a route declared before {@code /{code}} answers that path and the link could never be followed.
   * Read from the routes, so that a new route reserves its path without a list to keep in step.
   */
  public Set<String> reservedCodes() {
    return reservedCodes;
  }

  private static Set<String> routePrefixes(Javalin app) {
    return app.unsafe.internalRouter.allHttpHandlers().stream()
        .map(handler -> handler.endpoint.path.split("/"))
        .filter(
            segments ->
                segments.length > 1
                    && !segments[1].isEmpty()
                    && !segments[1].startsWith("{")
                    && !segments[1].startsWith("<"))
        .map(segments -> segments[1])
        .collect(Collectors.toUnmodifiableSet());
  }

  // ---- redirect path -------------------------------------------------------------------------

  private void redirect(Context ctx, boolean head) {
    long start = System.nanoTime();
    // The click's time is fixed as the request arrives, whatever the lookup takes after.
    long ts = System.currentTimeMillis();
    String code = ctx.pathParam("code");
    // While the set of codes is not current (at start, or with its listener's connection lost) any
    // code may exist, and one not in memory costs a lookup in PostgreSQL: the unknown-code limit is
    // taken before it, so that invented codes are limited before they reach the pool. The token
    // of a code that turns out to exist is spent all the same.
    boolean looksUp = LinkCodes.isValid(code) && !knownCodes.isCurrent() && !cache.inMemory(code);
    Optional<RateLimits.Verdict> overLimit = looksUp ? unknownCodeLimit(ctx) : Optional.empty();
    Optional<Link> link = overLimit.isPresent() ? Optional.empty() : findLink(code);
    if (!looksUp && link.isEmpty()) {
      overLimit = unknownCodeLimit(ctx);
    }
    int status;
    if (overLimit.isPresent()) {
      status = 429;
      rateLimitHeaders(ctx, overLimit.get());
      error(ctx, status, RateLimited.message(overLimit.get()));
    } else if (link.isEmpty()) {
      status = 404;
      error(ctx, status, "no link with code '" + ApiException.excerpt(code) + "'");
    } else if (link.get().disabled()) {
      status = 410;
      goneDisabled.increment();
      error(ctx, status, "link '" + code + "' was disabled");
    } else if (link.get().expiredAt(Instant.ofEpochMilli(ts))) {
      status = 410;
      goneExpired.increment();
      error(ctx, status, "link '" + code + "' expired at " + link.get().expiresAt());
    } else {
      String target = link.get().url();
      ShortUrlQuery query = ShortUrlQuery.of(ctx.queryString());
      String location = config.forwardQuery() ? query.mergedInto(target) : target;
      if (location == null) {
        status = 414;
        error(
            ctx,
            status,
            "the short URL's query string would make the target longer than "
                + ShortUrlQuery.MAX_LOCATION
                + " characters");
      } else {
        status = 302;
        ctx.status(302);
        ctx.header(Header.LOCATION, location);
        // A cached redirect would hide every repeat click from us.
        ctx.header(Header.CACHE_CONTROL, "private, no-store");
        clicks.accept(new AnsweredClick(ctx, code, ts, head, query, target));
      }
    }
    redirectCounter(status).increment();
    redirectLatency.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  /** Takes one unknown code from the client's bucket; the verdict when it was refused. */
  private Optional<RateLimits.Verdict> unknownCodeLimit(Context ctx) {
    return rateLimits
        .take(RateLimits.Limit.UNKNOWN_CODES, clientKey(ctx))
        .filter(v -> !v.allowed());
  }

  /**
   * The link with this code, for every public lookup: a code that cannot exist, or that no link
   * has, is answered from memory, so that a flood of invented codes costs PostgreSQL nothing and
   * cannot take the pool that redirects to links not yet in memory need.
   */
  private Optional<Link> findLink(String code) {
    return LinkCodes.isValid(code) && knownCodes.mightExist(code)
        ? cache.get(code)
        : Optional.empty();
  }

  /**
   * The click of one answered redirect, for the sink; its event is made from the request when first
   * asked for.
   */
  private final class AnsweredClick implements ClickSink.Click {
    private final Context ctx;
    private final String code;
    private final long ts;
    private final boolean head;
    private final ShortUrlQuery query;
    private final String target;
    private ClickEvent event;

    AnsweredClick(
        Context ctx, String code, long ts, boolean head, ShortUrlQuery query, String target) {
      this.ctx = ctx;
      this.code = code;
      this.ts = ts;
      this.head = head;
      this.query = query;
      this.target = target;
    }

    @Override
    public String code() {
      return code;
    }

    @Override
    public ClickEvent event() {
      if (event == null) {
        ClickEventFactory.RequestFacts facts =
            new ClickEventFactory.RequestFacts(
                ctx.req().getRemoteAddr(),
                Collections.list(ctx.req().getHeaders("X-Forwarded-For")),
                ctx.header(Header.USER_AGENT),
                ctx.header(Header.REFERER),
                config.countryHeader().map(ctx::header).orElse(null),
                head);
        // The click's identity: every later copy of the event, a retried send or a replay, carries
        // this id.
        event = events.create(ClickIds.next(), code, ts, facts, query.campaign(target));
      }
      return event;
    }
  }

  private Counter goneCounter(String reason) {
    return Counter.builder("tally.redirects.gone")
        .description("redirects answered 410, by why the link is gone")
        .tag("reason", reason)
        .register(registry);
  }

  private Counter redirectCounter(int status) {
    return redirectsByStatus.computeIfAbsent(
        status,
        s ->
            Counter.builder("tally.redirects")
                .description("redirect requests by status")
                .tag("status", String.valueOf(s))
                .register(registry));
  }

  // ---- stats API -----------------------------------------------------------------------------

  /**
   * The stats route's handler, timed per route whatever its answer: a refused request is part of
   * what a dashboard user waits for too, and the read side's latency is what its buckets were built
   * for.
   */
  private Handler timedStats(String route, Handler handler) {
    Timer timer =
        Timer.builder("tally.stats.latency")
            .description(
                "time to answer a stats API request (links list, series, breakdown, top links)")
            .tag("route", route)
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofNanos(100_000))
            .maximumExpectedValue(Duration.ofSeconds(30))
            .register(registry);
    return ctx -> {
      long start = System.nanoTime();
      try {
        String key = apiKeys().require(ctx, ApiKeys.Scope.READ).id();
        limit(RateLimits.Limit.STATS, key);
        try (StatsAdmission.Slot slot = statsAdmission.admit(key)) {
          handler.handle(ctx);
        }
      } finally {
        timer.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
      }
    };
  }

  // ---- links API -----------------------------------------------------------------------------

  private void createLink(Context ctx) {
    limit(RateLimits.Limit.CREATE, apiKeys().require(ctx, ApiKeys.Scope.WRITE).id());
    JsonNode body = readBody(ctx);
    UrlPolicy.Verdict verdict = urlPolicy.check(text(body, "url"));
    if (verdict instanceof UrlPolicy.Refused refused) {
      throw new ApiException(400, refused.reason());
    }
    String url = ((UrlPolicy.Accepted) verdict).url();
    String custom = text(body, "code");
    List<String> tags = body.has("tags") ? tags(body) : List.of();
    Instant expiresAt = expiresAt(body);
    Link link;
    if (custom != null) {
      if (!LinkCodes.isValid(custom)) {
        throw new ApiException(400, "code must match " + LinkCodes.PATTERN.pattern());
      }
      if (reservedCodes.contains(custom)) {
        throw new ApiException(400, "code '" + custom + "' is reserved");
      }
      link =
          links
              .insert(custom, url, tags, expiresAt)
              .orElseThrow(() -> new ApiException(409, "code '" + custom + "' is taken"));
    } else {
      link = insertWithGeneratedCode(url, tags, expiresAt);
    }
    knownCodes.add(link.code());
    cache.invalidate(link.code());
    ctx.status(201);
    ctx.header(Header.LOCATION, "/api/links/" + link.code());
    json(ctx, linkJson(link));
  }

  private Link insertWithGeneratedCode(String url, List<String> tags, Instant expiresAt) {
    for (int attempt = 0; attempt < CODE_ATTEMPTS; attempt++) {
      Optional<Link> link = links.insert(codes.next(), url, tags, expiresAt);
      if (link.isPresent()) {
        return link.get();
      }
    }
    throw new ApiException(503, "could not find a free code; try again");
  }

  private void getLink(Context ctx) {
    String code = ctx.pathParam("code");
    Link link =
        findLink(code)
            .orElseThrow(
                () ->
                    new ApiException(
                        404, "no link with code '" + ApiException.excerpt(code) + "'"));
    ObjectNode json = linkJson(link);
    if (apiKeys().presented(ctx).isEmpty()) {
      // A link is disabled to take its target down: only the key's holders still see where it led.
      if (link.disabled()) {
        json.remove("url");
      }
      // Tags are the owner's labels (a campaign, a customer), not the public's.
      json.remove("tags");
    }
    json(ctx, json);
  }

  /** The scope of the request's key, so that a client offers only what the key may do. */
  private void describeKey(Context ctx) {
    ApiKeys.Holder holder = apiKeys().require(ctx, ApiKeys.Scope.READ);
    ObjectNode json = JSON.createObjectNode();
    json.put("scope", holder.scope().lowerCase());
    json(ctx, json);
  }

  /**
   * {@code PATCH /api/links/{code}}: changes the target, the tags or the expiry of a link. Every
   * replica redirects to the new target once PostgreSQL's notification of the change reaches it, as
   * it learns of a new link.
   */
  private void changeLink(Context ctx) {
    apiKeys().require(ctx, ApiKeys.Scope.WRITE);
    String code = ctx.pathParam("code");
    JsonNode body = readBody(ctx);
    for (Iterator<String> fields = body.fieldNames(); fields.hasNext(); ) {
      String field = fields.next();
      if (!CHANGEABLE.contains(field)) {
        throw new ApiException(
            400,
            "a link's url, tags and expires_at can be changed, not '"
                + ApiException.excerpt(field)
                + "'");
      }
    }
    Optional<String> url = Optional.empty();
    if (body.has("url")) {
      UrlPolicy.Verdict verdict = urlPolicy.check(text(body, "url"));
      if (verdict instanceof UrlPolicy.Refused refused) {
        throw new ApiException(400, refused.reason());
      }
      url = Optional.of(((UrlPolicy.Accepted) verdict).url());
    }
    LinkChange change =
        new LinkChange(
            url,
            body.has("tags") ? Optional.of(tags(body)) : Optional.empty(),
            body.has("expires_at"),
            expiresAt(body));
    if (change.isEmpty()) {
      throw new ApiException(400, "name at least one of url, tags and expires_at to change");
    }
    Link link =
        links
            .change(code, change)
            .orElseThrow(
                () ->
                    new ApiException(
                        404, "no link with code '" + ApiException.excerpt(code) + "'"));
    cache.invalidate(code);
    json(ctx, linkJson(link));
  }

  /** The body's {@code tags}: an array of tags ({@link LinkTags}). */
  private static List<String> tags(JsonNode body) {
    JsonNode value = body.get("tags");
    if (value == null || !value.isArray()) {
      throw new ApiException(400, "tags must be an array of strings");
    }
    List<String> tags = new ArrayList<>();
    for (JsonNode tag : value) {
      if (!tag.isTextual()) {
        throw new ApiException(400, "tags must be an array of strings");
      }
      tags.add(tag.asText());
    }
    return LinkTags.checked(tags);
  }

  /** The body's {@code expires_at}: an ISO-8601 instant, or null (or absent) for none. */
  private static Instant expiresAt(JsonNode body) {
    String text = text(body, "expires_at");
    if (text == null) {
      return null;
    }
    try {
      Instant at = Instant.parse(text);
      // An expiry past this is no expiry anyone means, and would not fit every client's dates.
      if (at.isAfter(StatsRange.LATEST)) {
        throw new ApiException(400, "expires_at must be before " + StatsRange.LATEST);
      }
      return at;
    } catch (DateTimeParseException e) {
      throw new ApiException(
          400,
          "expires_at must be an ISO-8601 instant (2027-01-01T00:00:00Z), not '"
              + ApiException.excerpt(text)
              + "'");
    }
  }

  private void disableLink(Context ctx) {
    apiKeys().require(ctx, ApiKeys.Scope.WRITE);
    String code = ctx.pathParam("code");
    Link link =
        links
            .disable(code)
            .orElseThrow(
                () ->
                    new ApiException(
                        404, "no link with code '" + ApiException.excerpt(code) + "'"));
    cache.invalidate(code);
    json(ctx, linkJson(link));
  }

  private ObjectNode linkJson(Link link) {
    ObjectNode node = JSON.createObjectNode();
    node.put("code", link.code());
    node.put("short_url", config.publicUrl().replaceAll("/+$", "") + "/" + link.code());
    node.put("url", link.url());
    node.put("created_at", link.createdAt().toString());
    if (link.disabled()) {
      node.put("disabled_at", link.disabledAt().toString());
    }
    ArrayNode tags = node.putArray("tags");
    link.tags().forEach(tags::add);
    if (link.expiresAt() != null) {
      node.put("expires_at", link.expiresAt().toString());
    }
    return node;
  }

  private ApiKeys apiKeys() {
    return config.apiKeys();
  }

  // ---- rate limits ---------------------------------------------------------------------------

  /** Every API request, per client address. */
  private void limitApi(Context ctx) {
    limit(RateLimits.Limit.API, clientKey(ctx));
  }

  /** Takes one request from the client's bucket; throws {@link RateLimited} when it is empty. */
  private void limit(RateLimits.Limit limit, String client) {
    Optional<RateLimits.Verdict> verdict = rateLimits.take(limit, client);
    if (verdict.isPresent() && !verdict.get().allowed()) {
      throw new RateLimited(verdict.get());
    }
  }

  /** The client a request's limits are counted for: its address, as seen behind trusted proxies. */
  private String clientKey(Context ctx) {
    return RateLimits.addressKey(
        clientAddress.resolve(
            ctx.req().getRemoteAddr(), Collections.list(ctx.req().getHeaders("X-Forwarded-For"))),
        config.ipv6ClientPrefix());
  }

  /**
   * The headers of a refused request: {@code Retry-After}, and the {@code RateLimit-Policy} and
   * {@code RateLimit} fields of the IETF draft (quota and window; what is left and when it is
   * back).
   */
  private static void rateLimitHeaders(Context ctx, RateLimits.Verdict verdict) {
    String policy = "\"" + verdict.limit().policy() + "\"";
    ctx.header(Header.RETRY_AFTER, String.valueOf(verdict.retryAfterSeconds()));
    ctx.header("RateLimit-Policy", policy + ";q=" + verdict.perMinute() + ";w=60");
    ctx.header(
        "RateLimit", policy + ";r=" + verdict.remaining() + ";t=" + verdict.retryAfterSeconds());
  }

  /** A request over one of its client's limits, answered 429. */
  static final class RateLimited extends RuntimeException {
    private final transient RateLimits.Verdict verdict;

    RateLimited(RateLimits.Verdict verdict) {
      super(message(verdict), null, false, false);
      this.verdict = verdict;
    }

    RateLimits.Verdict verdict() {
      return verdict;
    }

    static String message(RateLimits.Verdict verdict) {
      return "over the limit of "
          + verdict.perMinute()
          + " "
          + verdict.limit().policy()
          + " requests a minute; try again in "
          + verdict.retryAfterSeconds()
          + " s";
    }
  }

  private static JsonNode readBody(Context ctx) {
    long declared = ctx.contentLength();
    if (declared > MAX_BODY_BYTES) {
      throw new ApiException(413, "request body is larger than " + MAX_BODY_BYTES + " bytes");
    }
    byte[] bytes = ctx.bodyAsBytes();
    if (bytes.length > MAX_BODY_BYTES) {
      throw new ApiException(413, "request body is larger than " + MAX_BODY_BYTES + " bytes");
    }
    try {
      JsonNode node = JSON.readTree(bytes);
      if (node == null || !node.isObject()) {
        throw new ApiException(400, "request body must be a JSON object");
      }
      return node;
    } catch (IOException e) {
      throw new ApiException(400, "request body is not valid JSON");
    }
  }

  private static String text(JsonNode body, String field) {
    JsonNode value = body.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isTextual()) {
      throw new ApiException(400, field + " must be a string");
    }
    return value.asText();
  }

  // ---- dashboard and API docs ----------------------------------------------------------------

  private void dashboard(Context ctx) {
    // The page loads its files by relative URLs, which need the trailing slash. (The browser keeps
    // the fragment, where the page keeps its state, across the redirect.)
    if (!ctx.path().endsWith("/")) {
      String query = ctx.queryString();
      ctx.redirect("/dashboard/" + (query == null ? "" : "?" + query), HttpStatus.FOUND);
      return;
    }
    resource(ctx, "dashboard/index.html", "text/html; charset=utf-8");
  }

  /**
   * The pages, the dashboard and the API's docs, run only scripts of their own files, may not be
   * framed and send no referrer; no answer may be read as another content type than it says. The
   * redirects' own {@code Referrer-Policy} is left to the browser: a link's target sees where its
   * visitors came from, as with any link.
   */
  static final String PAGE_SECURITY_POLICY =
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self'"
          + " data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self';"
          + " frame-ancestors 'none'";

  private static void securityHeaders(Context ctx) {
    ctx.header("X-Content-Type-Options", "nosniff");
    String path = ctx.path();
    if (path.startsWith("/dashboard") || path.startsWith("/api/docs")) {
      ctx.header("Content-Security-Policy", PAGE_SECURITY_POLICY);
      ctx.header("Referrer-Policy", "no-referrer");
    }
  }

  /** A file of a webjar on the classpath, under the webjar's version directory. */
  private static String webjarFile(String group, String artifact, String file) {
    return "META-INF/resources/webjars/"
        + artifact
        + "/"
        + webjarVersion(group, artifact)
        + "/"
        + file;
  }

  /** The version of a webjar on the classpath, as its Maven metadata gives it (the pom pins it). */
  private static String webjarVersion(String group, String artifact) {
    String path = "META-INF/maven/" + group + "/" + artifact + "/pom.properties";
    try (InputStream in = RedirectWebApp.class.getClassLoader().getResourceAsStream(path)) {
      Properties properties = new Properties();
      if (in != null) {
        properties.load(in);
      }
      return properties.getProperty("version", "missing");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String contentType(String file) {
    return file.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8";
  }

  private static void resource(Context ctx, String path, String contentType) {
    InputStream in = RedirectWebApp.class.getClassLoader().getResourceAsStream(path);
    if (in == null) {
      throw new ApiException(404, "no such file: " + path);
    }
    ctx.contentType(contentType);
    ctx.result(in);
  }

  // ---- operations ----------------------------------------------------------------------------

  private void metrics(Context ctx) {
    ctx.contentType("text/plain; version=0.0.4; charset=utf-8");
    ctx.result(registry.scrape());
  }

  /**
   * Whether this instance can answer redirects, for a load balancer, with what it depends on. It
   * serves while PostgreSQL answers, and while it does not but links are in memory: those redirect
   * as before (see {@link LinkCache}), only unknown codes answer 503. Kafka never decides it:
   * clicks are buffered or dropped and counted, and redirects go on. Answered from the last
   * background probe ({@link Readiness}): no request waits on either.
   */
  private void health(Context ctx) {
    Readiness.State state = readiness.state();
    boolean database = state.database();
    boolean kafka = state.kafka();
    boolean serving = database || cache.holdsLinks();
    ObjectNode node = JSON.createObjectNode();
    node.put("status", serving ? "serving" : "unavailable");
    node.put("database", database ? "up" : "down");
    node.put("kafka", kafka ? "up" : "down");
    ctx.status(serving ? 200 : 503);
    json(ctx, node);
  }

  // ---- helpers -------------------------------------------------------------------------------

  private static void json(Context ctx, JsonNode node) {
    ResponseBodies.json(ctx, node);
  }

  private static void error(Context ctx, int status, String message) {
    ResponseBodies.error(ctx, status, message);
  }
}
