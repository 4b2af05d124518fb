package io.tally.counting.functions;

import io.tally.counting.classify.BotKind;
import io.tally.counting.classify.UserAgentClassifier;
import io.tally.counting.classify.UserAgentFacts;
import io.tally.counting.records.Click;
import io.tally.counting.records.DeadLetter;
import io.tally.counting.records.RawClick;
import io.tally.event.ClickEvent;
import io.tally.event.ClickEventCodec;
import io.tally.event.Decoded;
import io.tally.event.MalformedReason;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Decodes and validates raw records with the contract's codec and classifies each valid click's
 * user agent (browser, OS, device type, bot kind). Valid clicks go on; anything malformed goes to
 * the {@link #DEAD_LETTERS} side output with its reason and source offset. Never throws on data.
 *
 * <p>A click is counted in the minute of its own {@code ts}, which every copy of it carries alike,
 * not in that of its record's Kafka timestamp, which a replayed copy may not share: whichever copy
 * a job keeps, it counts the same.
 *
 * <p>Version-1 events carry the redirect's own classification instead of a user agent: their
 * browser is kept, and a bot among them is of kind {@value UserAgentFacts#V1_BOT_KIND}.
 *
 * <p>A click that redirect-web marked as part of a burst ({@link ClickEvent#burst()}) is a bot of
 * kind {@code burst} and its agent is never classified: a client that floods a link with fresh
 * agents costs the job no parse. A {@code HEAD} request stays a bot of kind {@code head}.
 *
 * <p>An agent containing one of the user's own crawler fragments ({@link
 * io.tally.counting.CountingOptions#crawlerAgents}) is a crawler, whatever the built-in rules say,
 * unless the request was a {@code HEAD} or part of a burst, which stay bots of those kinds.
 */
public class ParseClicks extends ProcessFunction<RawClick, Click> {

  public static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("dead-letters") {};

  private static final UserAgentFacts CRAWLER = UserAgentFacts.ofBot(BotKind.CRAWLER);
  private static final UserAgentFacts BURST = UserAgentFacts.ofBot(BotKind.BURST);

  private final List<String> crawlerAgents;
  private transient UserAgentClassifier userAgents;
  private transient Counter parsed;
  private transient Map<MalformedReason, Counter> deadLettered;

  /** Classifies by the built-in rules alone. */
  public ParseClicks() {
    this(List.of());
  }

  /**
   * @param crawlerAgents lower-cased fragments of agents that count as crawlers besides the
   *     built-in rules
   */
  public ParseClicks(List<String> crawlerAgents) {
    this.crawlerAgents = List.copyOf(crawlerAgents);
  }

  @Override
  public void open(OpenContext openContext) {
    userAgents = UserAgentClassifier.shared();
    parsed = getRuntimeContext().getMetricGroup().counter("clicksParsed");
    deadLettered = new EnumMap<>(MalformedReason.class);
    for (MalformedReason reason : MalformedReason.values()) {
      deadLettered.put(
          reason,
          getRuntimeContext()
              .getMetricGroup()
              .addGroup("reason", reason.label())
              .counter("deadLettered"));
    }
  }

  @Override
  public void processElement(RawClick raw, Context ctx, Collector<Click> out) {
    Decoded decoded = ClickEventCodec.decode(raw.value(), raw.kafkaTimestamp());
    if (decoded instanceof Decoded.Valid valid) {
      ClickEvent e = valid.event();
      parsed.inc();
      UserAgentFacts ua = facts(e);
      out.collect(
          new Click(
              e.clickId(),
              e.code(),
              e.ts(),
              ua.botKind(),
              e.visitor(),
              e.rangeVisitor(),
              e.country(),
              e.referrerDomain(),
              ua.browser(),
              ua.os(),
              ua.device(),
              false,
              false,
              e.campaign().source(),
              e.campaign().medium(),
              e.campaign().campaign()));
    } else if (decoded instanceof Decoded.Malformed bad) {
      deadLettered.get(bad.reason()).inc();
      ctx.output(DEAD_LETTERS, deadLetter(raw, bad));
    }
  }

  /**
   * The dead letter of a record that cannot be counted. An oversized record keeps only its first
   * {@link ClickEventCodec#MAX_EVENT_BYTES} bytes: whole, a record near the broker's 1 MB limit
   * would make a letter (base64, a third larger) that the dead-letter producer refuses, failing the
   * job on every replay of it. The letter's source offset still leads to the whole record in the
   * click topic.
   */
  static DeadLetter deadLetter(RawClick raw, Decoded.Malformed bad) {
    byte[] value = raw.value();
    String detail = bad.detail();
    if (bad.reason() == MalformedReason.OVERSIZED
        && value != null
        && value.length > ClickEventCodec.MAX_EVENT_BYTES) {
      value = Arrays.copyOf(value, ClickEventCodec.MAX_EVENT_BYTES);
      detail += "; only the first " + ClickEventCodec.MAX_EVENT_BYTES + " bytes kept";
    }
    return new DeadLetter(
        bad.reason().label(), detail, raw.topic(), raw.partition(), raw.offset(), value);
  }

  private UserAgentFacts facts(ClickEvent e) {
    if (e.v1() != null) {
      return v1Facts(e.v1());
    }
    if (e.head()) {
      return userAgents.classify(e.userAgent(), true);
    }
    if (e.burst()) {
      return BURST;
    }
    if (isOwnCrawler(e.userAgent())) {
      return CRAWLER;
    }
    return userAgents.classify(e.userAgent(), false);
  }

  private boolean isOwnCrawler(String userAgent) {
    if (crawlerAgents.isEmpty() || userAgent == null) {
      return false;
    }
    String lower = userAgent.toLowerCase(Locale.ROOT);
    for (String fragment : crawlerAgents) {
      if (lower.contains(fragment)) {
        return true;
      }
    }
    return false;
  }

  private static UserAgentFacts v1Facts(ClickEvent.V1Client client) {
    return new UserAgentFacts(
        client.uaFamily(),
        UserAgentFacts.OTHER,
        client.bot() ? UserAgentFacts.BOT_DEVICE : "other",
        client.bot() ? UserAgentFacts.V1_BOT_KIND : "");
  }
}
