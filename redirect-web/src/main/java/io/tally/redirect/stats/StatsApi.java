package io.tally.redirect.stats;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.javalin.http.Context;
import io.tally.event.LinkCodes;
import io.tally.redirect.http.ApiException;
import io.tally.redirect.http.ApiKeys;
import io.tally.redirect.http.ResponseBodies;
import io.tally.redirect.links.Link;
import io.tally.redirect.links.LinkTags;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The read side's HTTP API: the links list, a link's time series, its breakdowns, and the top
 * links. Every route needs an API key. Ranges are read by {@link StatsRange}; the data comes from
 * {@link StatsStore}.
 */
public final class StatsApi {

  static final int DEFAULT_LINKS = 50;
  static final int MAX_LINKS = 200;
  static final int DEFAULT_VALUES = 10;
  static final int MAX_VALUES = 1000;
  static final int MAX_SEARCH = 200;

  /**
   * The shortest search: the trigram indexes serve three characters or more; a shorter one reads
   * every link.
   */
  static final int MIN_SEARCH = 3;

  /** Top links over more days than this are among the heaviest queries ({@link StatsAdmission}). */
  static final int HEAVY_TOP_DAYS = 31;

  /** Ranges longer than this read the top links from day rows instead of hour rows. */
  static final Duration TOP_FROM_DAYS = Duration.ofDays(2);

  /**
   * The longest range the top links are ranked over: the ranking reads every link's rows in the
   * range, a scan that would otherwise grow with the whole history.
   */
  static final Duration MAX_TOP_SPAN = Duration.ofDays(366);

  private final StatsStore store;
  private final ApiKeys apiKeys;
  private final Function<String, Optional<Link>> links;
  private final Function<Link, ObjectNode> linkJson;
  private final StatsAdmission admission;
  private final Clock clock;

  /** How long minute and hour rows are kept: how far back local buckets can be made of them. */
  private final Duration minuteRetention;

  private final Duration hourRetention;

  /**
   * The heaviest answers, kept briefly so that a client repeating one costs the database nothing;
   * each is read at most once at a time ({@link StatsAdmission#admitHeavy}).
   */
  private final Cache<TopQuery, List<StatsStore.CodeCount>> longTops =
      Caffeine.newBuilder()
          .expireAfterWrite(LONG_TOP_KEPT)
          .maximumWeight(KEPT_BYTES)
          .<TopQuery, List<StatsStore.CodeCount>>weigher(
              (query, top) ->
                  ROW_BYTES
                      + top.stream().mapToInt(row -> ROW_BYTES + 2 * row.code().length()).sum())
          .build();

  private final Cache<SearchQuery, StatsStore.LinkPage> searches =
      Caffeine.newBuilder()
          .expireAfterWrite(SEARCH_KEPT)
          .maximumWeight(KEPT_BYTES)
          .<SearchQuery, StatsStore.LinkPage>weigher(
              (query, page) ->
                  ROW_BYTES
                      + 2 * query.search().length()
                      + page.links().stream()
                          .mapToInt(
                              row ->
                                  ROW_BYTES
                                      + 2
                                          * (row.link().code().length()
                                              + row.link().url().length()))
                          .sum())
          .build();

  /**
   * How long the top links over a long range are kept: whole days of a month or more, where a
   * minute's clicks hardly move a rank.
   */
  static final Duration LONG_TOP_KEPT = Duration.ofMinutes(1);

  /** How long a search's page is kept: a new link shows in searches after this at most. */
  static final Duration SEARCH_KEPT = Duration.ofSeconds(5);

  /**
   * What each of the two kinds of kept answers may hold, taken as its strings at two bytes a
   * character and {@link #ROW_BYTES} a row: a search page lists URLs of up to 2,048 characters.
   */
  static final long KEPT_BYTES = 8L << 20;

  private static final int ROW_BYTES = 96;

  private record TopQuery(Instant from, Instant to, Interval table) {}

  private record SearchQuery(String search, String tag, StatsStore.Cursor after, int limit) {}

  /**
   * @param links looks a link up by code (the redirect path's cache)
   * @param linkJson the JSON form of a link, the same as the links API's
   * @param admission admits the heaviest queries
   * @param minuteRetention how long minute rows are kept
   * @param hourRetention how long hour rows are kept
   */
  public StatsApi(
      StatsStore store,
      ApiKeys apiKeys,
      Function<String, Optional<Link>> links,
      Function<Link, ObjectNode> linkJson,
      StatsAdmission admission,
      Clock clock,
      Duration minuteRetention,
      Duration hourRetention) {
    this.minuteRetention = minuteRetention;
    this.hourRetention = hourRetention;
    this.store = store;
    this.admission = admission;
    this.apiKeys = apiKeys;
    this.links = links;
    this.linkJson = linkJson;
    this.clock = clock;
  }

  /**
   * {@code GET /api/links?limit=&cursor=&q=}: links newest first, with their all-time human clicks.
   */
  public void listLinks(Context ctx) {
    apiKeys.require(ctx, ApiKeys.Scope.READ);
    int limit = intParam(ctx, "limit", DEFAULT_LINKS, 1, MAX_LINKS);
    String search = ctx.queryParam("q");
    if (search != null && search.isBlank()) {
      search = null;
    }
    if (search != null && search.length() > MAX_SEARCH) {
      throw new ApiException(400, "q must be at most " + MAX_SEARCH + " characters");
    }
    if (search != null && search.strip().length() < MIN_SEARCH) {
      throw new ApiException(
          400,
          "q must be at least "
              + MIN_SEARCH
              + " characters: a shorter search cannot use the search index");
    }
    String tag = ctx.queryParam("tag");
    if (tag != null && !LinkTags.PATTERN.matcher(tag).matches()) {
      throw new ApiException(
          400,
          "tag must match "
              + LinkTags.PATTERN.pattern()
              + ", not '"
              + ApiException.excerpt(tag)
              + "'");
    }
    StatsStore.Cursor after = cursor(ctx.queryParam("cursor"));
    StatsStore.LinkPage page;
    if (search == null) {
      page = store.links(limit, after, null, tag);
    } else {
      SearchQuery query = new SearchQuery(search, tag, after, limit);
      page = searches.getIfPresent(query);
      if (page == null) {
        try (StatsAdmission.Slot slot = admission.admitHeavy()) {
          page = store.links(limit, after, search, tag);
        }
        searches.put(query, page);
      }
    }
    ObjectNode body = ResponseBodies.object();
    ArrayNode list = body.putArray("links");
    for (StatsStore.ListedLink listed : page.links()) {
      list.add(linkJson.apply(listed.link()).put("clicks", listed.clicks()));
    }
    if (page.next() == null) {
      body.putNull("next_cursor");
    } else {
      body.put("next_cursor", encode(page.next()));
    }
    ResponseBodies.json(ctx, body);
  }

  /**
   * {@code GET /api/links/{code}/stats?from=&to=&interval=&format=}: the time series and its
   * totals.
   */
  public void series(Context ctx) {
    apiKeys.require(ctx, ApiKeys.Scope.READ);
    String code = existingCode(ctx);
    StatsRange range = range(ctx);
    Source source = storedSource(range);
    boolean csv = csv(ctx);
    boolean compare = compareWithPrevious(ctx, csv);
    Source previousSource = compare ? storedSource(range.previous()) : null;
    List<StatsStore.Point> points = store.series(code, range, source.read());
    if (csv) {
      StringBuilder out = new StringBuilder("t,clicks,bot_clicks,visitors\n");
      for (StatsStore.Point p : points) {
        out.append(p.t())
            .append(',')
            .append(p.clicks())
            .append(',')
            .append(p.botClicks())
            .append(',')
            .append(p.visitors() == null ? "" : p.visitors())
            .append('\n');
      }
      ResponseBodies.csv(ctx, code + "-" + range.interval().label() + ".csv", out.toString());
      return;
    }
    ObjectNode body = ResponseBodies.object();
    body.put("code", code);
    body.put("from", range.from().toString());
    body.put("to", range.to().toString());
    body.put("interval", range.interval().label());
    body.put("tz", range.zone().getId());
    boolean approximate = source.approximate() || (compare && previousSource.approximate());
    body.put("approximate", approximate);
    if (approximate) {
      body.put(
          "approximate_reason",
          "The range reaches back past the "
              + minuteRetention.toDays()
              + " days minute counts are kept, so the days of "
              + range.zone().getId()
              + " are made of the UTC hours that start in them: a day's count can be off by its"
              + " first and last part-hour.");
    } else {
      body.putNull("approximate_reason");
    }
    Optional<StatsStore.Progress> progress = store.progress();
    if (progress.isPresent()) {
      body.put("fresh_until", progress.get().closedBefore().toString());
    } else {
      body.putNull("fresh_until");
    }
    RangeVisitors unique = putFigures(body, code, range, points, progress);
    String note = unique.note(range);
    if (source.exact() != range.interval()) {
      String local =
          "Visitors per "
              + range.interval().label()
              + " of "
              + range.zone().getId()
              + " are not counted: exact visitors are kept per UTC hour and UTC day, so each"
              + " point's visitors are null.";
      note = note == null ? local : note + " " + local;
    }
    if (note == null) {
      body.putNull("visitors_note");
    } else {
      body.put("visitors_note", note);
    }
    if (compare) {
      StatsRange previous = range.previous();
      ObjectNode before = body.putObject("previous");
      before.put("from", previous.from().toString());
      before.put("to", previous.to().toString());
      putFigures(
          before, code, previous, store.series(code, previous, previousSource.read()), progress);
    }
    ResponseBodies.json(ctx, body);
  }

  /**
   * {@code GET /api/links/{code}/audit?from=&to=}: the link's ledger over whole UTC hours, the
   * ledger's buckets: the clicks counted, the copies and dead letters the job set aside instead,
   * the reconcile runs that changed its minutes, and the clicks redirect-web dropped before Kafka
   * (of every link: a dropped click's event is gone, and with it which link it was).
   */
  public void audit(Context ctx) {
    apiKeys.require(ctx, ApiKeys.Scope.READ);
    String code = existingCode(ctx);
    StatsRange range =
        StatsRange.hoursSince(
            ctx.queryParam("from"),
            ctx.queryParam("to"),
            clock.instant(),
            Interval.HOUR.ceil(clock.instant().minus(hourRetention)),
            "a ledger is kept "
                + hourRetention.toDays()
                + " days, with the hour counts it explains");
    StatsStore.Audit audit = store.audit(code, range.from(), range.to());
    ObjectNode body = ResponseBodies.object();
    body.put("code", code);
    body.put("from", range.from().toString());
    body.put("to", range.to().toString());
    Optional<StatsStore.Progress> progress = store.progress();
    body.put("final", progress.isPresent() && progress.get().isFinal(range.to()));
    body.putObject("counted").put("clicks", audit.clicks()).put("bot_clicks", audit.botClicks());
    body.putObject("set_aside")
        .put("duplicates", audit.duplicates())
        .put("late", audit.late())
        .put("refused_rows", audit.refusedRows());
    ArrayNode runs = body.putArray("reconcile_runs");
    for (StatsStore.AuditRun run : audit.runs()) {
      ObjectNode line =
          runs.addObject()
              .put("id", run.id())
              .put("mode", run.mode())
              .put("status", run.status())
              .put("range_from", run.rangeFrom().toString())
              .put("range_to", run.rangeTo().toString())
              .put("minutes_differing", run.minutes())
              .put("clicks_before", run.clicksBefore())
              .put("clicks_after", run.clicksAfter())
              .put("bot_clicks_before", run.botClicksBefore())
              .put("bot_clicks_after", run.botClicksAfter())
              .put("repaired", run.repaired());
      if (run.finishedAt() == null) {
        line.putNull("finished_at");
      } else {
        line.put("finished_at", run.finishedAt().toString());
      }
    }
    body.putObject("producer_drops")
        .put("dropped", audit.sendDrops())
        .put("instances", audit.dropInstances())
        .put("scope", "all links");
    ResponseBodies.json(ctx, body);
  }

  /**
   * A range's totals and series onto {@code node}, each bucket marked provisional, final or
   * repaired by reconcile; returns its unique visitors.
   */
  private RangeVisitors putFigures(
      ObjectNode node,
      String code,
      StatsRange range,
      List<StatsStore.Point> points,
      Optional<StatsStore.Progress> progress) {
    long clicks = 0;
    long bots = 0;
    Map<Instant, Instant> repairedAt = repairedBuckets(code, range);
    ArrayNode series = node.arrayNode();
    for (StatsStore.Point p : points) {
      clicks += p.clicks();
      bots += p.botClicks();
      ObjectNode point = series.addObject();
      point.put("t", p.t().toString());
      point.put("clicks", p.clicks());
      point.put("bot_clicks", p.botClicks());
      if (p.visitors() == null) {
        point.putNull("visitors");
      } else {
        point.put("visitors", p.visitors());
      }
      Instant repaired = repairedAt.get(p.t());
      if (repaired != null) {
        point.put("status", "repaired");
        point.put("repaired_at", repaired.toString());
      } else {
        Instant end = range.interval().next(p.t(), range.zone());
        point.put(
            "status",
            progress.isPresent() && progress.get().isFinal(end) ? "final" : "provisional");
      }
    }
    RangeVisitors unique = rangeVisitors(code, range, points);
    ObjectNode totals = node.putObject("totals");
    totals.put("clicks", clicks);
    totals.put("bot_clicks", bots);
    totals.put("visitors", unique.visitors());
    if (unique.exact()) {
      totals.put("visitors_exact", unique.visitors());
    } else {
      totals.putNull("visitors_exact");
    }
    totals.put("visitors_from", unique.span().from().toString());
    totals.put("visitors_to", unique.span().to().toString());
    totals.put("visitors_days_without_sketch", unique.unsketchedDays());
    node.set("series", series);
    return unique;
  }

  /**
   * The buckets of the range that reconcile repaired, each with when its latest repair finished.
   */
  private Map<Instant, Instant> repairedBuckets(String code, StatsRange range) {
    Map<Instant, Instant> repaired = new HashMap<>();
    for (StatsStore.Repair repair : store.repairs(code, range.from(), range.to())) {
      repaired.merge(
          range.interval().floor(repair.minute(), range.zone()),
          repair.repairedAt(),
          (a, b) -> a.isAfter(b) ? a : b);
    }
    return repaired;
  }

  /**
   * The range's unique visitors over its span. A span of one hour or one day is its bucket's series
   * point, read again only when the range's own series is not that bucket; several days cost one
   * query of the span's days.
   */
  private RangeVisitors rangeVisitors(
      String code, StatsRange range, List<StatsStore.Point> points) {
    VisitorSpan span = VisitorSpan.of(range);
    return switch (span.kind()) {
      case NONE -> RangeVisitors.exact(span, 0);
      case HOUR, DAY -> {
        List<StatsStore.Point> bucket =
            span.isTheOnlyBucketOf(range) ? points : store.series(code, span.bucket());
        yield RangeVisitors.exact(span, bucket.get(0).visitors());
      }
      case DAYS -> RangeVisitors.ofDays(span, store.daysVisitors(code, span.from(), span.to()));
    };
  }

  /**
   * {@code GET /api/links/{code}/breakdown?dimension=&from=&to=&limit=&format=}: values largest
   * first.
   */
  public void breakdown(Context ctx) {
    apiKeys.require(ctx, ApiKeys.Scope.READ);
    String code = existingCode(ctx);
    String dimensionText = ctx.queryParam("dimension");
    Dimension dimension = Dimension.parse(dimensionText);
    if (dimension == null) {
      throw new ApiException(
          400,
          "dimension must be one of "
              + Dimension.labels()
              + (dimensionText == null
                  ? ""
                  : ", not '" + ApiException.excerpt(dimensionText) + "'"));
    }
    int limit = intParam(ctx, "limit", DEFAULT_VALUES, 1, MAX_VALUES);
    StatsRange range = range(ctx).alignedTo(Interval.HOUR);
    boolean csv = csv(ctx);
    boolean compare = compareWithPrevious(ctx, csv);
    List<StatsStore.ValueCount> values =
        store.breakdown(code, dimension, range.from(), range.to(), limit);
    if (csv) {
      StringBuilder out = new StringBuilder("value,clicks\n");
      for (StatsStore.ValueCount v : values) {
        out.append(ResponseBodies.csvField(v.value())).append(',').append(v.clicks()).append('\n');
      }
      ResponseBodies.csv(ctx, code + "-" + dimension.label() + ".csv", out.toString());
      return;
    }
    ObjectNode body = ResponseBodies.object();
    body.put("code", code);
    body.put("dimension", dimension.label());
    body.put("from", range.from().toString());
    body.put("to", range.to().toString());
    Map<String, Long> before = Map.of();
    if (compare) {
      StatsRange previous = range.previous();
      body.putObject("previous")
          .put("from", previous.from().toString())
          .put("to", previous.to().toString());
      before =
          store.breakdownOf(
              code,
              dimension,
              previous.from(),
              previous.to(),
              values.stream().map(StatsStore.ValueCount::value).toList());
    }
    ArrayNode list = body.putArray("values");
    for (StatsStore.ValueCount v : values) {
      ObjectNode value = list.addObject().put("value", v.value()).put("clicks", v.clicks());
      if (compare) {
        value.put("previous_clicks", before.getOrDefault(v.value(), 0L));
      }
    }
    ResponseBodies.json(ctx, body);
  }

  /**
   * {@code GET /api/tags?from=&to=&limit=}: the tags by their links' human clicks in the range, as
   * the top links are ranked.
   */
  public void tags(Context ctx) {
    apiKeys.require(ctx, ApiKeys.Scope.READ);
    int limit = intParam(ctx, "limit", DEFAULT_VALUES, 1, MAX_VALUES);
    StatsRange range = rankingRange(ctx, "tags");
    Interval table = range.interval();
    List<StatsStore.TagCount> tags;
    if (Duration.between(range.from(), range.to()).toDays() > HEAVY_TOP_DAYS) {
      try (StatsAdmission.Slot slot = admission.admitHeavy()) {
        tags = store.tags(range.from(), range.to(), table, limit);
      }
    } else {
      tags = store.tags(range.from(), range.to(), table, limit);
    }
    ObjectNode body = ResponseBodies.object();
    body.put("from", range.from().toString());
    body.put("to", range.to().toString());
    ArrayNode list = body.putArray("tags");
    for (StatsStore.TagCount t : tags) {
      list.addObject()
          .put("tag", t.tag())
          .put("links", t.links())
          .put("clicks", t.clicks())
          .put("bot_clicks", t.botClicks());
    }
    ResponseBodies.json(ctx, body);
  }

  /**
   * The range a ranking over every link reads: at most {@link #MAX_TOP_SPAN}, in hours, or in UTC
   * days when longer than {@link #TOP_FROM_DAYS} in UTC.
   */
  private StatsRange rankingRange(Context ctx, String ranked) {
    StatsRange asked = range(ctx);
    // The range is already widened to whole buckets: one more bucket is the alignment, not the ask.
    if (Duration.between(asked.from(), asked.to())
            .compareTo(MAX_TOP_SPAN.plus(asked.interval().step()))
        > 0) {
      throw new ApiException(
          400,
          "the "
              + ranked
              + " are ranked over at most "
              + MAX_TOP_SPAN.toDays()
              + " days; ask for a shorter range");
    }
    // Stored days are UTC days: the local days of another zone are read from the hours.
    Interval table =
        Duration.between(asked.from(), asked.to()).compareTo(TOP_FROM_DAYS) > 0 && asked.isUtc()
            ? Interval.DAY
            : Interval.HOUR;
    return asked.alignedTo(table);
  }

  /** {@code GET /api/top?from=&to=&limit=}: the links with the most human clicks in the range. */
  public void top(Context ctx) {
    apiKeys.require(ctx, ApiKeys.Scope.READ);
    int limit = intParam(ctx, "limit", DEFAULT_VALUES, 1, MAX_VALUES);
    StatsRange range = rankingRange(ctx, "top links");
    Interval table = range.interval();
    ObjectNode body = ResponseBodies.object();
    body.put("from", range.from().toString());
    body.put("to", range.to().toString());
    ArrayNode list = body.putArray("links");
    List<StatsStore.CodeCount> top;
    if (Duration.between(range.from(), range.to()).toDays() > HEAVY_TOP_DAYS) {
      TopQuery query = new TopQuery(range.from(), range.to(), table);
      top = longTops.getIfPresent(query);
      if (top == null) {
        try (StatsAdmission.Slot slot = admission.admitHeavy()) {
          top = List.copyOf(store.top(range.from(), range.to(), table, MAX_VALUES));
        }
        longTops.put(query, top);
      }
      top = top.subList(0, Math.min(limit, top.size()));
    } else {
      top = store.top(range.from(), range.to(), table, limit);
    }
    for (StatsStore.CodeCount c : top) {
      list.addObject().put("code", c.code()).put("clicks", c.clicks());
    }
    ResponseBodies.json(ctx, body);
  }

  private StatsRange range(Context ctx) {
    return StatsRange.parse(
        ctx.queryParam("from"),
        ctx.queryParam("to"),
        ctx.queryParam("interval"),
        clock.instant(),
        zone(ctx));
  }

  private static final ZoneId UTC = ZoneId.of("UTC");

  /** The {@code tz} whose hours and days the buckets are: an IANA zone, UTC when absent. */
  private static ZoneId zone(Context ctx) {
    String tz = ctx.queryParam("tz");
    if (tz == null || tz.isBlank()) {
      return UTC;
    }
    try {
      return ZoneId.of(tz.trim());
    } catch (DateTimeException e) {
      throw new ApiException(
          400,
          "tz must be an IANA time zone such as America/New_York or UTC, not '"
              + ApiException.excerpt(tz)
              + "'");
    }
  }

  /**
   * The stored buckets a range is read from, and those that would make it exactly.
   *
   * @param read the buckets read
   * @param exact the buckets that make the range's exactly ({@link StatsStore#sourceOf})
   */
  private record Source(Interval read, Interval exact) {

    /** Whether the range is read from coarser buckets than make it exactly. */
    boolean approximate() {
      return read != exact;
    }
  }

  /**
   * The stored buckets a range is read from: those that make it exactly ({@link
   * StatsStore#sourceOf}) while they are kept; for the days of a zone of part-hour offsets once
   * their minutes are gone, the UTC hours, each counted in the local day it starts in (the answer
   * says it is approximate). Any other range whose rows are gone is refused: it would read as
   * zeros, not as what happened.
   */
  private Source storedSource(StatsRange range) {
    Interval source = StatsStore.sourceOf(range);
    if (source == range.interval()) {
      return new Source(source, source);
    }
    Duration kept = source == Interval.MINUTE ? minuteRetention : hourRetention;
    Instant oldest = clock.instant().minus(kept);
    if (range.from().isBefore(oldest)
        && source == Interval.MINUTE
        && range.interval() == Interval.DAY
        && !range.from().isBefore(clock.instant().minus(hourRetention))) {
      return new Source(Interval.HOUR, source);
    }
    if (range.from().isBefore(oldest)) {
      throw new ApiException(
          400,
          "the "
              + range.interval().label()
              + "s of "
              + range.zone().getId()
              + " are made of "
              + (source == Interval.MINUTE ? "minute" : "hour")
              + " counts, kept "
              + kept.toDays()
              + " days: ask for a range from "
              + Interval.DAY.ceil(oldest)
              + " on"
              + (source == Interval.MINUTE ? ", or use tz=UTC" : ", or use tz=UTC for UTC days"));
    }
    return new Source(source, source);
  }

  private String existingCode(Context ctx) {
    String code = ctx.pathParam("code");
    // Stats of a disabled link are still served: its clicks happened.
    if (!LinkCodes.isValid(code) || links.apply(code).isEmpty()) {
      throw new ApiException(404, "no link with code '" + ApiException.excerpt(code) + "'");
    }
    return code;
  }

  private static boolean csv(Context ctx) {
    String format = ctx.queryParam("format");
    if (format == null || format.equals("json")) {
      return false;
    }
    if (format.equals("csv")) {
      return true;
    }
    throw new ApiException(
        400, "format must be json or csv, not '" + ApiException.excerpt(format) + "'");
  }

  /**
   * Whether the answer also gives the period just before the one asked for ({@code
   * compare=previous}). A CSV holds one period, so a comparison there is refused rather than left
   * out.
   */
  private static boolean compareWithPrevious(Context ctx, boolean csv) {
    String compare = ctx.queryParam("compare");
    if (compare == null || compare.isBlank()) {
      return false;
    }
    if (!compare.equals("previous")) {
      throw new ApiException(
          400, "compare must be previous, not '" + ApiException.excerpt(compare) + "'");
    }
    if (csv) {
      throw new ApiException(400, "compare=previous is given as JSON only; leave out format=csv");
    }
    return true;
  }

  private static int intParam(Context ctx, String name, int fallback, int min, int max) {
    String text = ctx.queryParam(name);
    if (text == null || text.isBlank()) {
      return fallback;
    }
    try {
      int value = Integer.parseInt(text.trim());
      if (value < min || value > max) {
        throw new ApiException(
            400, name + " must be between " + min + " and " + max + ", not " + value);
      }
      return value;
    } catch (NumberFormatException e) {
      throw new ApiException(
          400, name + " must be an integer, not '" + ApiException.excerpt(text) + "'");
    }
  }

  static String encode(StatsStore.Cursor cursor) {
    String raw = cursor.createdAt() + " " + cursor.code();
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(raw.getBytes(StandardCharsets.UTF_8));
  }

  static StatsStore.Cursor cursor(String text) {
    if (text == null || text.isBlank()) {
      return null;
    }
    try {
      String raw = new String(Base64.getUrlDecoder().decode(text.trim()), StandardCharsets.UTF_8);
      int space = raw.indexOf(' ');
      String code = raw.substring(space + 1);
      if (space < 0 || !LinkCodes.isValid(code)) {
        throw new IllegalArgumentException("no code");
      }
      return new StatsStore.Cursor(Instant.parse(raw.substring(0, space)), code);
    } catch (IllegalArgumentException
        | DateTimeParseException
        | StringIndexOutOfBoundsException e) {
      throw new ApiException(400, "cursor is not one this API gave out");
    }
  }
}
