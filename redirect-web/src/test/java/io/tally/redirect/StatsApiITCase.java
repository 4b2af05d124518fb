package io.tally.redirect;

import static io.tally.redirect.RunningRedirectWeb.API_KEY;
import static io.tally.redirect.RunningRedirectWeb.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.event.VisitorSketches;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.apache.datasketches.cpc.CpcSketch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The stats API on a real redirect-web and PostgreSQL, over tables seeded with known buckets (the
 * API reads buckets only, so known rows give known answers): every endpoint, range and interval
 * edge, CSV, limits, errors, and the dashboard's files.
 */
class StatsApiITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();
  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();

  private static RunningRedirectWeb web;
  private static String code;
  private static String other;
  private static String disabled;
  private static String uniques;

  /**
   * Fifty people's visitor keys over three days with sketches: 0-9 come on all three, 10-19 on the
   * first and the third, the others on one day each.
   */
  private static final int PEOPLE = 50;

  private static final long[][] PEOPLE_BY_DAY = {
    LongStream.range(0, 30).toArray(),
    LongStream.concat(LongStream.range(0, 10), LongStream.range(30, 40)).toArray(),
    LongStream.concat(LongStream.range(0, 20), LongStream.range(40, 50)).toArray()
  };

  @BeforeAll
  static void seed() throws Exception {
    PG.truncateAll();
    web =
        RunningRedirectWeb.start(
            RunningRedirectWeb.environment(PG, KAFKA, KAFKA.newTopic("clicks-stats", 1)));
    // The oldest link, so the links list shows it last.
    uniques = create("https://example.com/uniques", "stats-uniq");
    code = create("https://example.com/stats", "stats-main");
    other = create("https://example.org/other", "stats-other");
    disabled = create("https://example.net/gone", "stats-gone");
    assertThat(
            web.delete("/api/links/" + disabled, "Authorization", "Bearer " + API_KEY).statusCode())
        .isEqualTo(200);
    sql(
        "INSERT INTO click_counts (code, minute, clicks, bot_clicks) VALUES ('stats-main',"
            + " '2026-11-01T10:00:00Z', 3, 1), ('stats-main', '2026-11-01T10:01:00Z', 2, 0),"
            + " ('stats-main', '2026-11-01T11:59:00Z', 1, 0)",
        "INSERT INTO click_hourly (code, hour, clicks, bot_clicks, visitors) VALUES ('stats-main',"
            + " '2026-11-01T10:00:00Z', 5, 1, 4), ('stats-main', '2026-11-01T11:00:00Z', 1, 0, 1),"
            + " ('stats-other', '2026-11-01T10:00:00Z', 9, 0, 2), ('stats-gone',"
            + " '2026-11-01T10:00:00Z', 2, 0, 1)",
        "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors) VALUES"
            + " ('stats-main', '2026-11-01', 6, 1, 4), ('stats-main', '2026-11-02', 2, 0, 2),"
            + " ('stats-other', '2026-11-01', 9, 0, 2), ('stats-gone', '2026-11-01', 2, 0, 1)",
        "INSERT INTO click_dimensions_hourly (code, hour, dimension, value, clicks) VALUES"
            + " ('stats-main', '2026-11-01T10:00:00Z', 'country', 'DE', 4),"
            + " ('stats-main', '2026-11-01T10:00:00Z', 'country', 'US', 1),"
            + " ('stats-main', '2026-11-01T11:00:00Z', 'country', 'DE', 1),"
            + " ('stats-main', '2026-11-01T10:00:00Z', 'referrer', '', 3),"
            + " ('stats-main', '2026-11-01T10:00:00Z', 'referrer', 'news, \"daily\"', 2),"
            + " ('stats-main', '2026-11-01T10:00:00Z', 'bot_kind', 'crawler', 1),"
            // A full hour's values beyond its bound, and the stand-in of a value PostgreSQL
            // refused: both count as (other).
            + " ('stats-main', '2026-11-01T11:00:00Z', 'referrer', 'news.example', 2),"
            + " ('stats-main', '2026-11-01T11:00:00Z', 'referrer', '(other)', 1),"
            + " ('stats-main', '2026-11-01T11:00:00Z', 'referrer', '(other) "
            + "0fd25edfa2148cf56be3faf5bb6b6d9006c2556a332febdaf7e9d92d62dd6ebe', 2)",
        // The days' breakdowns, as the job writes them next to the hours'; 2026-11-02 has no hours
        // here.
        "INSERT INTO click_dimensions_daily (code, day, dimension, value, clicks) VALUES"
            + " ('stats-main', '2026-11-01', 'country', 'DE', 5), ('stats-main', '2026-11-01',"
            + " 'country', 'US', 1), ('stats-main', '2026-11-01', 'referrer', '', 3),"
            + " ('stats-main', '2026-11-01', 'referrer', 'news, \"daily\"', 2), ('stats-main',"
            + " '2026-11-01', 'bot_kind', 'crawler', 1), ('stats-main', '2026-11-02', 'country',"
            + " 'FR', 2)",
        "INSERT INTO stream_progress (job, closed_before) VALUES ('tally-click-count',"
            + " '2026-11-01T12:00:00Z')");
    seedUniques();
  }

  /**
   * Days with sketches of {@link #PEOPLE_BY_DAY} from 2026-12-01, two of the second day's hours,
   * and the day before them without a sketch, as every day before sketches were kept.
   */
  private static void seedUniques() throws Exception {
    try (Connection c = PG.connect();
        PreparedStatement day =
            c.prepareStatement(
                "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors, visitor_sketch)"
                    + " VALUES ('stats-uniq', ?, ?, 0, ?, ?)")) {
      for (int i = 0; i < PEOPLE_BY_DAY.length; i++) {
        CpcSketch sketch = VisitorSketches.newSketch();
        for (long person : PEOPLE_BY_DAY[i]) {
          sketch.update(visitorKey(person));
        }
        day.setDate(1, java.sql.Date.valueOf(LocalDate.parse("2026-12-01").plusDays(i)));
        day.setLong(2, PEOPLE_BY_DAY[i].length + 5L);
        day.setLong(3, PEOPLE_BY_DAY[i].length);
        day.setBytes(4, VisitorSketches.toBytes(sketch));
        day.executeUpdate();
      }
    }
    sql(
        "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors) VALUES ('stats-uniq',"
            + " '2026-11-30', 9, 0, 7)",
        // 20 on the day, 21 over its hours: one person came in both.
        "INSERT INTO click_hourly (code, hour, clicks, bot_clicks, visitors) VALUES ('stats-uniq',"
            + " '2026-12-02T10:00:00Z', 14, 0, 12), ('stats-uniq', '2026-12-02T11:00:00Z', 10, 0,"
            + " 9)");
  }

  /** A person's range visitor key, spread as the click job's keys are. */
  private static long visitorKey(long person) {
    return person * 0x9E3779B97F4A7C15L + 0x5EEDL;
  }

  @AfterAll
  static void stop() {
    if (web != null) {
      web.close();
    }
  }

  @Test
  void aMinuteSeriesHasEveryBucketWithZerosAndItsHoursExactVisitors() {
    JsonNode body =
        ok(
            "/api/links/stats-main/stats?from=2026-11-01T10:00:00Z&to=2026-11-01T10:03:00Z&interval=minute");

    assertThat(body.get("interval").asText()).isEqualTo("minute");
    assertThat(points(body))
        .containsExactly(
            "2026-11-01T10:00:00Z 3 1 null",
            "2026-11-01T10:01:00Z 2 0 null",
            "2026-11-01T10:02:00Z 0 0 null");
    assertThat(body.get("totals").toString())
        .isEqualTo(
            "{\"clicks\":5,\"bot_clicks\":1,\"visitors\":4,\"visitors_exact\":4,"
                + "\"visitors_from\":\"2026-11-01T10:00:00Z\","
                + "\"visitors_to\":\"2026-11-01T11:00:00Z\","
                + "\"visitors_days_without_sketch\":0}");
    assertThat(body.get("fresh_until").asText()).isEqualTo("2026-11-01T12:00:00Z");
    assertThat(body.get("visitors_note").asText())
        .isEqualTo(
            "Unique visitors are counted over the whole clock hour: 2026-11-01T10:00:00Z to"
                + " 2026-11-01T11:00:00Z.");
  }

  @Test
  void anHourSeriesIsAlignedToWholeHoursAndCountsItsDaysExactVisitors() {
    JsonNode body =
        ok(
            "/api/links/stats-main/stats?from=2026-11-01T10:30:00Z&to=2026-11-01T11:30:00Z&interval=hour");

    assertThat(body.get("from").asText()).isEqualTo("2026-11-01T10:00:00Z");
    assertThat(body.get("to").asText()).isEqualTo("2026-11-01T12:00:00Z");
    assertThat(points(body))
        .containsExactly("2026-11-01T10:00:00Z 5 1 4", "2026-11-01T11:00:00Z 1 0 1");
    // Not the hours' sum of 5: the range lies within one day, whose exact visitors are 4.
    assertThat(body.get("totals").toString())
        .isEqualTo(
            "{\"clicks\":6,\"bot_clicks\":1,\"visitors\":4,\"visitors_exact\":4,"
                + "\"visitors_from\":\"2026-11-01T00:00:00Z\","
                + "\"visitors_to\":\"2026-11-02T00:00:00Z\","
                + "\"visitors_days_without_sketch\":0}");
    assertThat(body.get("visitors_note").asText())
        .isEqualTo(
            "Unique visitors are counted over the whole UTC day: 2026-11-01T00:00:00Z to"
                + " 2026-11-02T00:00:00Z.");
  }

  @Test
  void aDaySeriesReadsUtcDays() {
    JsonNode body =
        ok(
            "/api/links/stats-main/stats?from=2026-11-01T00:00:00Z&to=2026-11-03T00:00:00Z&interval=day");

    assertThat(points(body))
        .containsExactly("2026-11-01T00:00:00Z 6 1 4", "2026-11-02T00:00:00Z 2 0 2");
    // Both days are from before sketches: their daily visitors add up, and the note says so.
    assertThat(body.get("totals").get("visitors").asLong()).isEqualTo(6);
    assertThat(body.get("totals").get("visitors_exact").isNull()).isTrue();
    assertThat(body.get("visitors_note").asText())
        .isEqualTo(
            "2 of the range's days had visitors but no visitor sketch (from before sketches were"
                + " kept, or with visitor keys off for some of the day): each adds its own daily"
                + " visitors, so a person who came on such a day and on another day counts twice.");
  }

  @Test
  void wholeDaysWithSketchesCountEachPersonOnce() {
    JsonNode body =
        ok(
            "/api/links/stats-uniq/stats?from=2026-12-01T00:00:00Z&to=2026-12-04T00:00:00Z&interval=day");

    long daysSum = 0;
    for (JsonNode point : body.get("series")) {
      daysSum += point.get("visitors").asLong();
    }
    assertThat(daysSum).as("the days' own visitors, unchanged in the series").isEqualTo(80);
    JsonNode totals = body.get("totals");
    // CPC at lgK 14 is exact or off by one at a few dozen keys.
    assertThat(totals.get("visitors").asLong()).isCloseTo(PEOPLE, within(1L)).isLessThan(daysSum);
    assertThat(totals.get("visitors_exact").isNull()).isTrue();
    assertThat(totals.get("visitors_from").asText()).isEqualTo("2026-12-01T00:00:00Z");
    assertThat(totals.get("visitors_to").asText()).isEqualTo("2026-12-04T00:00:00Z");
    assertThat(totals.get("visitors_days_without_sketch").asLong()).isZero();
    assertThat(body.get("visitors_note").isNull()).as(body.toString()).isTrue();
  }

  @Test
  void hoursOverSeveralDaysCountTheWholeDaysTheyTouch() {
    JsonNode body =
        ok(
            "/api/links/stats-uniq/stats?from=2026-12-01T10:00:00Z&to=2026-12-03T10:00:00Z&interval=hour");

    JsonNode totals = body.get("totals");
    assertThat(totals.get("visitors").asLong()).isCloseTo(PEOPLE, within(1L));
    assertThat(totals.get("visitors_exact").isNull()).isTrue();
    assertThat(totals.get("visitors_from").asText()).isEqualTo("2026-12-01T00:00:00Z");
    assertThat(totals.get("visitors_to").asText()).isEqualTo("2026-12-04T00:00:00Z");
    assertThat(body.get("visitors_note").asText())
        .isEqualTo(
            "Unique visitors are counted over whole UTC days: 2026-12-01T00:00:00Z to"
                + " 2026-12-04T00:00:00Z.");
  }

  @Test
  void aSingleHourIsItsExactHourlyVisitors() {
    JsonNode hour =
        ok(
            "/api/links/stats-uniq/stats?from=2026-12-02T10:00:00Z&to=2026-12-02T11:00:00Z&interval=hour");
    // Not the day's 20.
    assertThat(hour.get("totals").get("visitors").asLong()).isEqualTo(12);
    assertThat(hour.get("totals").get("visitors_exact").asLong()).isEqualTo(12);
    assertThat(hour.get("totals").get("visitors_from").asText()).isEqualTo("2026-12-02T10:00:00Z");
    assertThat(hour.get("totals").get("visitors_to").asText()).isEqualTo("2026-12-02T11:00:00Z");
    assertThat(hour.get("visitors_note").isNull()).isTrue();

    JsonNode minutes =
        ok(
            "/api/links/stats-uniq/stats?from=2026-12-02T11:15:00Z&to=2026-12-02T11:45:00Z&interval=minute");
    assertThat(minutes.get("totals").get("visitors_exact").asLong()).isEqualTo(9);
    assertThat(minutes.get("totals").get("visitors_from").asText())
        .isEqualTo("2026-12-02T11:00:00Z");
    assertThat(minutes.get("visitors_note").asText()).contains("the whole clock hour");
  }

  @Test
  void aRangeWithinOneDayIsThatDaysExactVisitors() {
    // Three hours at the default (minute) interval; its hours' visitors add up to 21.
    JsonNode body =
        ok("/api/links/stats-uniq/stats?from=2026-12-02T09:00:00Z&to=2026-12-02T12:00:00Z");

    assertThat(body.get("interval").asText()).isEqualTo("minute");
    JsonNode totals = body.get("totals");
    assertThat(totals.get("visitors").asLong()).isEqualTo(20);
    assertThat(totals.get("visitors_exact").asLong()).isEqualTo(20);
    assertThat(totals.get("visitors_from").asText()).isEqualTo("2026-12-02T00:00:00Z");
    assertThat(totals.get("visitors_to").asText()).isEqualTo("2026-12-03T00:00:00Z");
    assertThat(body.get("visitors_note").asText())
        .isEqualTo(
            "Unique visitors are counted over the whole UTC day: 2026-12-02T00:00:00Z to"
                + " 2026-12-03T00:00:00Z.");
  }

  @Test
  void aDayWithoutASketchAddsItsOwnVisitorsAndTheNoteSaysSo() {
    JsonNode body =
        ok(
            "/api/links/stats-uniq/stats?from=2026-11-30T00:00:00Z&to=2026-12-04T00:00:00Z&interval=day");

    JsonNode totals = body.get("totals");
    assertThat(totals.get("visitors").asLong()).isCloseTo(PEOPLE + 7, within(1L));
    assertThat(totals.get("visitors_exact").isNull()).isTrue();
    assertThat(totals.get("visitors_from").asText()).isEqualTo("2026-11-30T00:00:00Z");
    assertThat(totals.get("visitors_days_without_sketch").asLong()).isEqualTo(1);
    assertThat(body.get("visitors_note").asText())
        .isEqualTo(
            "1 of the range's days had visitors but no visitor sketch (from before sketches were"
                + " kept, or with visitor keys off for some of the day): each adds its own daily"
                + " visitors, so a person who came on such a day and on another day counts twice.");

    JsonNode hours =
        ok(
            "/api/links/stats-uniq/stats?from=2026-11-30T12:00:00Z&to=2026-12-01T12:00:00Z&interval=hour");
    assertThat(hours.get("totals").get("visitors").asLong())
        .isCloseTo(7 + PEOPLE_BY_DAY[0].length, within(1L));
    assertThat(hours.get("visitors_note").asText())
        .startsWith("Unique visitors are counted over whole UTC days: 2026-11-30T00:00:00Z to")
        .contains(" 1 of those days had visitors but no visitor sketch");
  }

  @Test
  void theIntervalFollowsTheRangeWhenNotGiven() {
    assertThat(
            ok("/api/links/stats-main/stats?from=2026-11-01T10:00:00Z&to=2026-11-01T12:00:00Z")
                .get("interval")
                .asText())
        .isEqualTo("minute");
    assertThat(
            ok("/api/links/stats-main/stats?from=2026-11-01T00:00:00Z&to=2026-11-03T00:00:00Z")
                .get("interval")
                .asText())
        .isEqualTo("hour");
    assertThat(
            ok("/api/links/stats-main/stats?from=2026-10-01T00:00:00Z&to=2026-11-03T00:00:00Z")
                .get("interval")
                .asText())
        .isEqualTo("day");
    JsonNode relative = ok("/api/links/stats-main/stats?from=7d&to=now");
    assertThat(relative.get("interval").asText()).isEqualTo("hour");
    assertThat(relative.get("series")).hasSize(24 * 7 + 1);
  }

  @Test
  void anEmptyRangeHasNoPointsAndZeroTotals() {
    JsonNode body =
        ok(
            "/api/links/stats-main/stats?from=2026-11-01T10:00:00Z&to=2026-11-01T10:00:00Z&interval=minute");

    assertThat(body.get("series")).isEmpty();
    assertThat(body.get("totals").get("clicks").asLong()).isZero();
    assertThat(body.get("totals").get("visitors").asLong()).isZero();
    assertThat(body.get("totals").get("visitors_from").asText())
        .isEqualTo(body.get("totals").get("visitors_to").asText())
        .isEqualTo("2026-11-01T10:00:00Z");
    assertThat(body.get("visitors_note").isNull()).isTrue();
  }

  @Test
  void refusesRangesItCannotAnswerWithTheReason() {
    assertError(
        "/api/links/stats-main/stats?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z",
        400,
        "is before from");
    assertError(
        "/api/links/stats-main/stats?from=2020-01-01T00:00:00Z&to=2026-11-01T00:00:00Z&interval=minute",
        400,
        "more than 10000 points");
    assertError(
        "/api/links/stats-main/stats?interval=week", 400, "interval must be minute, hour or day");
    assertError(
        "/api/links/stats-main/stats?from=yesterday", 400, "from must be an ISO-8601 instant");
    assertError(
        "/api/links/stats-main/stats?from=-300000000-01-01T00:00:00Z", 400, "from must be between");
    assertError("/api/links/stats-main/stats?format=xml", 400, "format must be json or csv");
    assertError("/api/links/no-such-code/stats", 404, "no link with code 'no-such-code'");
  }

  @Test
  void everyStatsRouteNeedsAKey() {
    for (String path :
        List.of(
            "/api/links",
            "/api/links/stats-main/stats",
            "/api/links/stats-main/breakdown?dimension=os",
            "/api/top")) {
      assertThat(web.get(path).statusCode()).as(path).isEqualTo(401);
      assertThat(web.get(path, "Authorization", "Bearer wrong-key").statusCode())
          .as(path)
          .isEqualTo(403);
    }
  }

  @Test
  void eachStatsRouteIsTimedUnderItsOwnName() {
    Map<String, String> routes =
        Map.of(
            "links",
            "/api/links",
            "series",
            "/api/links/stats-main/stats?from=24h",
            "breakdown",
            "/api/links/stats-main/breakdown?dimension=os&from=24h",
            "top",
            "/api/top?from=24h",
            "tags",
            "/api/tags?from=24h",
            "audit",
            "/api/links/stats-main/audit?from=24h");
    for (Map.Entry<String, String> route : routes.entrySet()) {
      String series = "route=\"" + route.getKey() + "\"";
      double before = web.series("tally_stats_latency_seconds_count").getOrDefault(series, 0.0);

      ok(route.getValue());
      assertThat(web.get(route.getValue()).statusCode())
          .as("refused without a key, timed all the same")
          .isEqualTo(401);

      assertThat(web.series("tally_stats_latency_seconds_count").get(series))
          .as(route.getKey())
          .isEqualTo(before + 2);
    }
    assertThat(web.get("/metrics").body())
        .contains("tally_stats_latency_seconds_bucket{route=\"series\",le=");
  }

  @Test
  void theSeriesAsCsvHasAHeaderAndOneLinePerBucket() {
    HttpResponse<String> csv =
        get(
            "/api/links/stats-main/stats?from=2026-11-01T10:00:00Z&to=2026-11-01T12:00:00Z&interval=hour&format=csv");

    assertThat(csv.statusCode()).isEqualTo(200);
    assertThat(csv.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/csv");
    assertThat(csv.body())
        .isEqualTo(
            "t,clicks,bot_clicks,visitors\n"
                + "2026-11-01T10:00:00Z,5,1,4\n"
                + "2026-11-01T11:00:00Z,1,0,1\n");
  }

  @Test
  void aBreakdownSumsItsDaysAndEdgeHoursLargestFirstAndHonoursTheLimit() {
    JsonNode countries =
        ok(
            "/api/links/stats-main/breakdown?dimension=country&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z");
    assertThat(countries.get("values").toString())
        .isEqualTo("[{\"value\":\"DE\",\"clicks\":5},{\"value\":\"US\",\"clicks\":1}]");

    JsonNode top1 =
        ok(
            "/api/links/stats-main/breakdown?dimension=country&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&limit=1");
    assertThat(top1.get("values")).hasSize(1);

    JsonNode bots =
        ok(
            "/api/links/stats-main/breakdown?dimension=bot_kind&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z");
    assertThat(bots.get("values").toString()).isEqualTo("[{\"value\":\"crawler\",\"clicks\":1}]");

    JsonNode lateHour =
        ok(
            "/api/links/stats-main/breakdown?dimension=country&from=2026-11-01T11:00:00Z&to=2026-11-01T12:00:00Z");
    assertThat(lateHour.get("values").toString()).isEqualTo("[{\"value\":\"DE\",\"clicks\":1}]");

    // Whole days from the day rows, the hours before them from the hour rows: 11-01 from 11:00,
    // then 11-02.
    JsonNode days =
        ok(
            "/api/links/stats-main/breakdown?dimension=country&from=2026-11-01T11:00:00Z&to=2026-11-03T00:00:00Z");
    assertThat(days.get("values").toString())
        .isEqualTo("[{\"value\":\"FR\",\"clicks\":2},{\"value\":\"DE\",\"clicks\":1}]");

    JsonNode referrers =
        ok(
            "/api/links/stats-main/breakdown?dimension=referrer&from=2026-11-01T11:00:00Z&to=2026-11-01T12:00:00Z");
    assertThat(referrers.get("values").toString())
        .isEqualTo(
            "[{\"value\":\"(other)\",\"clicks\":3},{\"value\":\"news.example\",\"clicks\":2}]");

    assertError("/api/links/stats-main/breakdown?dimension=shoe_size", 400, "utm_campaign");
    assertError(
        "/api/links/stats-main/breakdown?dimension=os&limit=0",
        400,
        "limit must be between 1 and 1000");
  }

  @Test
  void newYorksDaysAroundTheEndOfSummerTimeAreMadeOfItsHours() throws Exception {
    create("https://example.com/new-york", "stats-ny");
    // 2026-11-01 02:00 EDT (06:00Z) the clocks go back: that local day has 25 hours.
    sql(
        "INSERT INTO click_hourly (code, hour, clicks, bot_clicks, visitors) VALUES"
            + " ('stats-ny', '2026-10-31T10:00:00Z', 1, 0, 1),"
            + " ('stats-ny', '2026-11-01T03:00:00Z', 2, 0, 1),"
            + " ('stats-ny', '2026-11-01T04:00:00Z', 4, 1, 1),"
            + " ('stats-ny', '2026-11-02T04:00:00Z', 8, 0, 1),"
            + " ('stats-ny', '2026-11-02T05:00:00Z', 16, 0, 1)");

    JsonNode days =
        ok(
            "/api/links/stats-ny/stats?from=2026-10-31T12:00:00Z&to=2026-11-03T05:00:00Z"
                + "&interval=day&tz=America/New_York&compare=previous");

    assertThat(days.get("tz").asText()).isEqualTo("America/New_York");
    assertThat(days.get("from").asText())
        .as("widened to the local midnight before")
        .isEqualTo("2026-10-31T04:00:00Z");
    assertThat(points(days))
        .containsExactly(
            "2026-10-31T04:00:00Z 3 0 null",
            "2026-11-01T04:00:00Z 12 1 null",
            "2026-11-02T05:00:00Z 16 0 null");
    assertThat(days.get("visitors_note").asText())
        .contains("Visitors per day of America/New_York are not counted");
    assertThat(days.get("previous").get("from").asText())
        .as("three local days before, one of them 25 hours long")
        .isEqualTo("2026-10-28T04:00:00Z");

    JsonNode longDay =
        ok(
            "/api/links/stats-ny/stats?from=2026-11-01T04:00:00Z&to=2026-11-02T05:00:00Z"
                + "&interval=hour&tz=America/New_York");
    assertThat(longDay.get("series")).hasSize(25);
    assertThat(longDay.get("totals").get("clicks").asLong()).isEqualTo(12);
    JsonNode shortDay =
        ok(
            "/api/links/stats-ny/stats?from=2026-03-08T05:00:00Z&to=2026-03-09T04:00:00Z"
                + "&interval=hour&tz=America/New_York");
    assertThat(shortDay.get("series")).as("the day the clocks go forward").hasSize(23);
  }

  @Test
  void kolkatasHalfHourOffsetMakesItsDaysOfMinutesWhileTheyAreKept() throws Exception {
    create("https://example.com/kolkata", "stats-in");
    ZoneId kolkata = ZoneId.of("Asia/Kolkata");
    Instant yesterday = LocalDate.now(kolkata).minusDays(1).atStartOfDay(kolkata).toInstant();
    try (Connection c = PG.connect();
        PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO click_counts (code, minute, clicks, bot_clicks) VALUES ('stats-in',"
                    + " ?, ?, 0)")) {
      long[][] minutes = {{-1, 1}, {0, 2}, {24 * 60 - 1, 4}, {24 * 60, 8}};
      for (long[] minute : minutes) {
        insert.setTimestamp(1, Timestamp.from(yesterday.plus(Duration.ofMinutes(minute[0]))));
        insert.setLong(2, minute[1]);
        insert.executeUpdate();
      }
    }

    JsonNode days =
        ok(
            "/api/links/stats-in/stats?interval=day&tz=Asia/Kolkata&from="
                + yesterday.minus(Duration.ofDays(1))
                + "&to="
                + yesterday.plus(Duration.ofDays(1)));
    assertThat(points(days))
        .as("local midnights at 18:30 UTC")
        .containsExactly(
            yesterday.minus(Duration.ofDays(1)) + " 1 0 null", yesterday + " 6 0 null");
    JsonNode hour =
        ok(
            "/api/links/stats-in/stats?interval=hour&tz=Asia/Kolkata&from="
                + yesterday
                + "&to="
                + yesterday.plus(Duration.ofHours(1)));
    assertThat(points(hour)).containsExactly(yesterday + " 2 0 null");

    assertThat(days.get("approximate").asBoolean()).isFalse();

    // Past the minutes' 14 days, a local day is made of the UTC hours that start in it, and says
    // so.
    JsonNode old =
        ok(
            "/api/links/stats-main/stats?from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z"
                + "&interval=day&tz=Asia/Kolkata");
    assertThat(old.get("approximate").asBoolean()).isTrue();
    assertThat(points(old))
        .containsExactly("2026-10-31T18:30:00Z 6 1 null", "2026-11-01T18:30:00Z 0 0 null");
    assertThat(old.get("approximate_reason").asText())
        .contains("made of the UTC hours that start in them");
    assertThat(days.get("approximate_reason").isNull()).isTrue();
    assertError(
        "/api/links/stats-main/stats?from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z"
            + "&interval=hour&tz=Asia/Kolkata",
        400,
        "the hours of Asia/Kolkata are made of minute counts, kept 14 days");
    assertError("/api/links/stats-main/stats?tz=Mars/Olympus", 400, "tz must be an IANA time zone");
  }

  @Test
  void eachBucketSaysWhetherItIsProvisionalFinalOrRepaired() throws Exception {
    String hours =
        "/api/links/stats-main/stats?from=2026-11-01T10:00:00Z&to=2026-11-01T12:00:00Z"
            + "&interval=hour";
    // The job has closed the minutes before 12:00 and late clicks change a period for 5 minutes
    // after its end: the hour to 11:00 is final, the hour to 12:00 is not yet.
    assertThat(statuses(ok(hours))).containsExactly("final", "provisional");

    sql(
        "INSERT INTO reconcile_runs (id, range_from, range_to, closed_before, mode, status,"
            + " finished_at) VALUES (901, '2026-11-01', '2026-11-02', '2026-11-01T12:00:00Z',"
            + " 'repair', 'finished', '2026-11-02T03:00:00Z'), (902, '2026-11-01', '2026-11-02',"
            + " '2026-11-01T12:00:00Z', 'dry-run', 'finished', '2026-11-02T04:00:00Z')",
        "INSERT INTO reconcile_drift (run_id, code, minute, kind, repaired) VALUES"
            + " (901, 'stats-main', '2026-11-01T10:01:00Z', 'under', TRUE),"
            + " (902, 'stats-main', '2026-11-01T11:59:00Z', 'under', FALSE)");
    try {
      JsonNode repaired = ok(hours);
      assertThat(statuses(repaired))
          .as("a dry run repairs nothing")
          .containsExactly("repaired", "provisional");
      assertThat(repaired.get("series").get(0).get("repaired_at").asText())
          .isEqualTo("2026-11-02T03:00:00Z");
      assertThat(
              statuses(
                  ok(
                      "/api/links/stats-main/stats?from=2026-11-01T10:00:00Z"
                          + "&to=2026-11-01T10:03:00Z&interval=minute")))
          .containsExactly("final", "repaired", "final");
    } finally {
      sql("DELETE FROM reconcile_runs WHERE id IN (901, 902)");
    }
  }

  @Test
  void theAuditLedgerSaysWhatWasCountedSetAsideRepairedAndDropped() throws Exception {
    String audit = "/api/links/stats-main/audit?from=2026-11-01T10:20:00Z&to=2026-11-01T12:00:00Z";
    sql(
        "INSERT INTO link_ledger_hourly (code, hour, duplicates, late, refused_rows) VALUES"
            + " ('stats-main', '2026-11-01T10:00:00Z', 4, 1, 0), ('stats-main',"
            + " '2026-11-01T11:00:00Z', 2, 0, 1), ('stats-main', '2026-11-01T12:00:00Z', 100, 0,"
            + " 0), ('stats-other', '2026-11-01T10:00:00Z', 100, 0, 0)",
        "INSERT INTO click_send_drops (instance, minute, dropped) VALUES ('web-a',"
            + " '2026-11-01T10:30:00Z', 5), ('web-b', '2026-11-01T11:59:00Z', 2), ('web-a',"
            + " '2026-11-01T12:00:00Z', 100)",
        "INSERT INTO reconcile_runs (id, range_from, range_to, closed_before, mode, status,"
            + " finished_at) VALUES (911, '2026-11-01', '2026-11-02', '2026-11-01T12:00:00Z',"
            + " 'repair', 'finished', '2026-11-02T03:00:00Z'), (912, '2026-11-01', '2026-11-02',"
            + " '2026-11-01T12:00:00Z', 'dry-run', 'finished', '2026-11-02T04:00:00Z')",
        "INSERT INTO reconcile_drift (run_id, code, minute, kind, stored_clicks,"
            + " stored_bot_clicks, recounted_clicks, recounted_bot_clicks, repaired) VALUES"
            + " (911, 'stats-main', '2026-11-01T10:01:00Z', 'under', 1, 0, 2, 0, TRUE),"
            + " (911, 'stats-main', '2026-11-01T11:30:00Z', 'over', 3, 1, 2, 1, TRUE),"
            + " (911, 'stats-other', '2026-11-01T10:01:00Z', 'under', 1, 0, 9, 0, TRUE),"
            + " (912, 'stats-main', '2026-11-01T11:59:00Z', 'under', 1, 0, 2, 0, FALSE)");
    try {
      JsonNode ledger = ok(audit);

      assertThat(ledger.get("from").asText())
          .as("widened to whole hours")
          .isEqualTo("2026-11-01T10:00:00Z");
      assertThat(ledger.get("to").asText()).isEqualTo("2026-11-01T12:00:00Z");
      assertThat(ledger.get("final").asBoolean())
          .as("the hour to 12:00 can still take late clicks")
          .isFalse();
      assertThat(ledger.get("counted").get("clicks").asLong()).isEqualTo(6);
      assertThat(ledger.get("counted").get("bot_clicks").asLong()).isEqualTo(1);
      assertThat(ledger.get("set_aside").get("duplicates").asLong()).isEqualTo(6);
      assertThat(ledger.get("set_aside").get("late").asLong()).isEqualTo(1);
      assertThat(ledger.get("set_aside").get("refused_rows").asLong()).isEqualTo(1);
      JsonNode runs = ledger.get("reconcile_runs");
      assertThat(runs).hasSize(2);
      assertThat(runs.get(0).get("id").asLong()).isEqualTo(912);
      assertThat(runs.get(0).get("repaired").asBoolean()).isFalse();
      JsonNode repair = runs.get(1);
      assertThat(repair.get("mode").asText()).isEqualTo("repair");
      assertThat(repair.get("finished_at").asText()).isEqualTo("2026-11-02T03:00:00Z");
      assertThat(repair.get("minutes_differing").asLong()).isEqualTo(2);
      assertThat(repair.get("clicks_before").asLong()).isEqualTo(4);
      assertThat(repair.get("clicks_after").asLong()).isEqualTo(4);
      assertThat(repair.get("bot_clicks_before").asLong()).isEqualTo(1);
      assertThat(repair.get("repaired").asBoolean()).isTrue();
      assertThat(ledger.get("producer_drops").get("dropped").asLong()).isEqualTo(7);
      assertThat(ledger.get("producer_drops").get("instances").asInt()).isEqualTo(2);
      assertThat(ledger.get("producer_drops").get("scope").asText()).isEqualTo("all links");

      assertError("/api/links/stats-main/audit?from=2020-01-01T00:00:00Z", 400, "kept");
    } finally {
      sql(
          "DELETE FROM reconcile_runs WHERE id IN (911, 912)",
          "DELETE FROM link_ledger_hourly",
          "DELETE FROM click_send_drops");
    }
  }

  private static List<String> statuses(JsonNode body) {
    List<String> statuses = new ArrayList<>();
    body.get("series").forEach(point -> statuses.add(point.get("status").asText()));
    return statuses;
  }

  @Test
  void comparedWithThePeriodBeforeFromTheSameBuckets() {
    JsonNode series =
        ok(
            "/api/links/stats-main/stats?from=2026-11-02T00:00:00Z&to=2026-11-03T00:00:00Z"
                + "&interval=day&compare=previous");

    assertThat(series.get("totals").get("clicks").asLong()).isEqualTo(2);
    JsonNode previous = series.get("previous");
    assertThat(previous.get("from").asText()).isEqualTo("2026-11-01T00:00:00Z");
    assertThat(previous.get("to").asText()).isEqualTo("2026-11-02T00:00:00Z");
    assertThat(points(previous)).containsExactly("2026-11-01T00:00:00Z 6 1 4");
    assertThat(previous.get("totals").get("clicks").asLong()).isEqualTo(6);
    assertThat(previous.get("totals").get("bot_clicks").asLong()).isEqualTo(1);
    assertThat(previous.get("totals").get("visitors").asLong()).isEqualTo(4);
    assertThat(ok("/api/links/stats-main/stats?from=2026-11-02T00:00:00Z").has("previous"))
        .isFalse();

    // The values of the hour asked for, each with its clicks in the hour before; US had clicks
    // only before, so it is not one of the hour's values.
    JsonNode countries =
        ok(
            "/api/links/stats-main/breakdown?dimension=country&from=2026-11-01T11:00:00Z"
                + "&to=2026-11-01T12:00:00Z&compare=previous");
    assertThat(countries.get("values").toString())
        .isEqualTo("[{\"value\":\"DE\",\"clicks\":1,\"previous_clicks\":4}]");
    assertThat(countries.get("previous").toString())
        .isEqualTo("{\"from\":\"2026-11-01T10:00:00Z\",\"to\":\"2026-11-01T11:00:00Z\"}");
    JsonNode newValue =
        ok(
            "/api/links/stats-main/breakdown?dimension=country&from=2026-11-02T00:00:00Z"
                + "&to=2026-11-03T00:00:00Z&compare=previous");
    assertThat(newValue.get("values").toString())
        .isEqualTo("[{\"value\":\"FR\",\"clicks\":2,\"previous_clicks\":0}]");

    assertError("/api/links/stats-main/stats?compare=last-year", 400, "compare must be previous");
    assertError(
        "/api/links/stats-main/breakdown?dimension=os&format=csv&compare=previous",
        400,
        "compare=previous is given as JSON only");
  }

  @Test
  void tagTotalsAddUpTheirLinksClicksInTheRange() throws Exception {
    sql(
        "UPDATE links SET tags = '{launch,ads}' WHERE code = 'stats-main'",
        "UPDATE links SET tags = '{ads}' WHERE code = 'stats-other'",
        "UPDATE links SET tags = '{idle}' WHERE code = 'stats-uniq'");
    try {
      JsonNode hours = ok("/api/tags?from=2026-11-01T10:00:00Z&to=2026-11-01T12:00:00Z&limit=10");
      assertThat(hours.get("tags").toString())
          .isEqualTo(
              "[{\"tag\":\"ads\",\"links\":2,\"clicks\":15,\"bot_clicks\":1},"
                  + "{\"tag\":\"launch\",\"links\":1,\"clicks\":6,\"bot_clicks\":1},"
                  + "{\"tag\":\"idle\",\"links\":1,\"clicks\":0,\"bot_clicks\":0}]");

      assertThat(codes(ok("/api/links?tag=ads"))).containsExactly("stats-other", "stats-main");
      assertThat(codes(ok("/api/links?tag=ads&q=example.org"))).containsExactly("stats-other");
      assertThat(codes(ok("/api/links?tag=nobody"))).isEmpty();
      assertError("/api/links?tag=two%20words", 400, "tag must match");

      JsonNode days = ok("/api/tags?from=2026-10-30T00:00:00Z&to=2026-11-03T00:00:00Z&limit=1");
      assertThat(days.get("tags").toString())
          .as("over days, from the day rows, the first only")
          .isEqualTo("[{\"tag\":\"ads\",\"links\":2,\"clicks\":17,\"bot_clicks\":1}]");
    } finally {
      sql("UPDATE links SET tags = '{}'");
    }
  }

  @Test
  void theCampaignTagsAreDimensionsOfTheTaggedClicks() throws Exception {
    sql(
        "INSERT INTO click_dimensions_hourly (code, hour, dimension, value, clicks) VALUES"
            + " ('stats-other', '2026-11-01T10:00:00Z', 'utm_source', 'newsletter', 3),"
            + " ('stats-other', '2026-11-01T10:00:00Z', 'utm_source', '', 1),"
            + " ('stats-other', '2026-11-01T10:00:00Z', 'utm_campaign', 'spring', 4)");
    try {
      JsonNode sources =
          ok(
              "/api/links/stats-other/breakdown?dimension=utm_source"
                  + "&from=2026-11-01T10:00:00Z&to=2026-11-01T11:00:00Z");
      assertThat(sources.get("values").toString())
          .isEqualTo("[{\"value\":\"newsletter\",\"clicks\":3},{\"value\":\"\",\"clicks\":1}]");
    } finally {
      sql("DELETE FROM click_dimensions_hourly WHERE dimension LIKE 'utm_%'");
    }
  }

  @Test
  void aBreakdownAsCsvQuotesValuesThatNeedIt() {
    HttpResponse<String> csv =
        get(
            "/api/links/stats-main/breakdown?dimension=referrer&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&format=csv");

    assertThat(csv.body()).isEqualTo("value,clicks\n,3\n\"news, \"\"daily\"\"\",2\n");
  }

  @Test
  void topListsLinksByHumanClicksInTheRange() {
    JsonNode hours = ok("/api/top?from=2026-11-01T09:00:00Z&to=2026-11-01T12:00:00Z");
    assertThat(hours.get("links").toString())
        .isEqualTo(
            "[{\"code\":\"stats-other\",\"clicks\":9},{\"code\":\"stats-main\",\"clicks\":6},{\"code\":\"stats-gone\",\"clicks\":2}]");

    JsonNode days = ok("/api/top?from=2026-10-01T00:00:00Z&to=2026-11-30T00:00:00Z&limit=2");
    assertThat(days.get("links").toString())
        .isEqualTo(
            "[{\"code\":\"stats-other\",\"clicks\":9},{\"code\":\"stats-main\",\"clicks\":8}]");

    assertThat(ok("/api/top?from=366d").get("links")).isNotNull();
    assertError("/api/top?from=9999d", 400, "the top links are ranked over at most 366 days");
  }

  @Test
  void theLinksListPagesNewestFirstWithAllTimeClicks() {
    JsonNode first = ok("/api/links?limit=2");
    assertThat(codes(first)).containsExactly(disabled, other);
    assertThat(first.get("links").get(0).get("disabled_at").isTextual()).isTrue();
    assertThat(first.get("links").get(0).get("clicks").asLong()).isEqualTo(2);
    assertThat(first.get("links").get(1).get("short_url").asText()).endsWith("/" + other);

    JsonNode second = ok("/api/links?limit=2&cursor=" + first.get("next_cursor").asText());
    assertThat(codes(second)).containsExactly(code, uniques);
    assertThat(second.get("links").get(0).get("clicks").asLong()).isEqualTo(8);
    assertThat(second.get("next_cursor").isNull()).isTrue();

    assertError("/api/links?cursor=not-a-cursor", 400, "cursor");
  }

  @Test
  void theLinksListSearchesCodesAndUrlsLiterally() {
    assertThat(codes(ok("/api/links?q=EXAMPLE.ORG"))).containsExactly(other);
    assertThat(codes(ok("/api/links?q=" + URLEncoder.encode("stats-m", StandardCharsets.UTF_8))))
        .containsExactly(code);
    assertThat(codes(ok("/api/links?q=%25%25%25")))
        .as("% is a character, not a wildcard")
        .isEmpty();
  }

  @Test
  void aSearchTooShortForTheSearchIndexIsRefused() {
    assertError("/api/links?q=or", 400, "at least 3 characters");
    assertError("/api/links?q=%20a%20", 400, "at least 3 characters");
  }

  @Test
  void aDisabledLinksStatsAreStillServed() {
    JsonNode body =
        ok(
            "/api/links/stats-gone/stats?from=2026-11-01T10:00:00Z&to=2026-11-01T11:00:00Z&interval=hour");

    assertThat(body.get("totals").get("clicks").asLong()).isEqualTo(2);
  }

  @Test
  void theDashboardAndItsChartLibraryAreServedFromTheApp() {
    HttpResponse<String> bare = web.get("/dashboard");
    assertThat(bare.statusCode()).isEqualTo(302);
    assertThat(bare.headers().firstValue("Location")).hasValue("/dashboard/");

    HttpResponse<String> page = web.get("/dashboard/");
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.body())
        .contains("api-key-input")
        .contains("vendor/chart.umd.js")
        .contains("dashboard.js");
    assertThat(web.get("/dashboard/dashboard.js").statusCode()).isEqualTo(200);
    HttpResponse<String> chart = web.get("/dashboard/vendor/chart.umd.js");
    assertThat(chart.statusCode()).isEqualTo(200);
    assertThat(chart.body()).contains("Chart");
  }

  @Test
  void thePagesRunOnlyTheirOwnScriptsAndEveryAnswerSaysItsType() {
    HttpResponse<String> withQuery = web.get("/dashboard?link=abc");
    assertThat(withQuery.headers().firstValue("Location")).hasValue("/dashboard/?link=abc");

    for (String page : List.of("/dashboard/", "/dashboard/dashboard.js", "/api/docs")) {
      HttpResponse<String> response = web.get(page);
      assertThat(response.headers().firstValue("Content-Security-Policy"))
          .as(page)
          .hasValue(RedirectWebApp.PAGE_SECURITY_POLICY);
      assertThat(response.headers().firstValue("Referrer-Policy")).as(page).hasValue("no-referrer");
      assertThat(response.headers().firstValue("X-Content-Type-Options"))
          .as(page)
          .hasValue("nosniff");
    }
    assertThat(RedirectWebApp.PAGE_SECURITY_POLICY)
        .contains("script-src 'self';")
        .contains("frame-ancestors 'none'");
    assertThat(web.get("/dashboard/").body()).doesNotContain("<script>");
    HttpResponse<String> json = web.get("/api/top", "Authorization", "Bearer " + API_KEY);
    assertThat(json.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
    assertThat(json.headers().firstValue("Content-Security-Policy")).isEmpty();
  }

  // ---- helpers -------------------------------------------------------------------------------

  private static String create(String url, String customCode) {
    HttpResponse<String> response =
        web.post(
            "/api/links",
            "{\"url\":\"" + url + "\",\"code\":\"" + customCode + "\"}",
            "Authorization",
            "Bearer " + API_KEY,
            "Content-Type",
            "application/json");
    assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
    return customCode;
  }

  private static void sql(String... statements) throws Exception {
    try (Connection c = PG.connect();
        Statement s = c.createStatement()) {
      for (String statement : statements) {
        s.execute(statement);
      }
    }
  }

  private static HttpResponse<String> get(String path) {
    return web.get(path, "Authorization", "Bearer " + API_KEY);
  }

  private static JsonNode ok(String path) {
    HttpResponse<String> response = get(path);
    assertThat(response.statusCode()).as(path + " " + response.body()).isEqualTo(200);
    return json(response);
  }

  private static void assertError(String path, int status, String message) {
    HttpResponse<String> response = get(path);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    JsonNode body = json(response);
    assertThat(body.get("status").asInt()).isEqualTo(status);
    assertThat(body.get("error").asText()).contains(message);
  }

  private static List<String> points(JsonNode body) {
    List<String> points = new ArrayList<>();
    for (JsonNode p : body.get("series")) {
      points.add(
          p.get("t").asText()
              + " "
              + p.get("clicks").asLong()
              + " "
              + p.get("bot_clicks").asLong()
              + " "
              + (p.get("visitors").isNull() ? "null" : p.get("visitors").asLong()));
    }
    return points;
  }

  private static List<String> codes(JsonNode body) {
    List<String> codes = new ArrayList<>();
    body.get("links").forEach(l -> codes.add(l.get("code").asText()));
    return codes;
  }
}
