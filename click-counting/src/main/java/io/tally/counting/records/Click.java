package io.tally.counting.records;

import io.tally.event.ClickEvent;
import java.util.UUID;

/**
 * A parsed, classified click: what counting and the breakdowns need. The job carries this instead
 * of the raw event so that network shuffles hold only what they use; no state holds a whole click.
 *
 * @param clickId the click's id, made at the click
 * @param code the link code, the key of every keyed operator
 * @param ts event time, epoch milliseconds
 * @param botKind {@code ""} for a person, otherwise a {@link io.tally.counting.classify.BotKind}
 *     label
 * @param visitor the day's visitor hash, {@code ""} when the click has none
 * @param rangeVisitor the visitor's key on the link across days, for the day's visitor sketch
 *     ({@link io.tally.event.VisitorSketches}); {@link io.tally.event.ClickEvent#NO_RANGE_VISITOR}
 *     when none
 * @param country ISO country code or {@code unknown}
 * @param referrer the referrer's host, {@code ""} when there was none
 * @param browser browser family
 * @param os operating-system family
 * @param device device type
 * @param newVisitorInHour whether this is the visitor's first human click on the link in its hour
 * @param newVisitorInDay whether this is the visitor's first human click on the link in its UTC day
 * @param utmSource the campaign's source tag, {@code ""} when untagged
 * @param utmMedium the campaign's medium tag, {@code ""} when untagged
 * @param utmCampaign the campaign's name tag, {@code ""} when untagged
 */
public record Click(
    UUID clickId,
    String code,
    long ts,
    String botKind,
    String visitor,
    long rangeVisitor,
    String country,
    String referrer,
    String browser,
    String os,
    String device,
    boolean newVisitorInHour,
    boolean newVisitorInDay,
    String utmSource,
    String utmMedium,
    String utmCampaign) {

  /** A click without campaign tags. */
  public Click(
      UUID clickId,
      String code,
      long ts,
      String botKind,
      String visitor,
      long rangeVisitor,
      String country,
      String referrer,
      String browser,
      String os,
      String device,
      boolean newVisitorInHour,
      boolean newVisitorInDay) {
    this(
        clickId,
        code,
        ts,
        botKind,
        visitor,
        rangeVisitor,
        country,
        referrer,
        browser,
        os,
        device,
        newVisitorInHour,
        newVisitorInDay,
        "",
        "",
        "");
  }

  /** Whether the click came with any campaign tag, and so counts under the campaign dimensions. */
  public boolean tagged() {
    return !utmSource.isEmpty() || !utmMedium.isEmpty() || !utmCampaign.isEmpty();
  }

  /** Whether any kind of bot made the click; human counts leave every bot kind out. */
  public boolean bot() {
    return !botKind.isEmpty();
  }

  /**
   * Whether the click brings its visitor's key into the day's visitor sketch: a person's first
   * click on the link in the day, with a key. Later clicks of the day would add the same key.
   */
  public boolean addsToDaySketch() {
    return !bot() && newVisitorInDay && rangeVisitor != ClickEvent.NO_RANGE_VISITOR;
  }

  /** The same click with its visitor marks set. */
  public Click withNewVisitor(boolean inHour, boolean inDay) {
    return new Click(
        clickId,
        code,
        ts,
        botKind,
        visitor,
        rangeVisitor,
        country,
        referrer,
        browser,
        os,
        device,
        inHour,
        inDay,
        utmSource,
        utmMedium,
        utmCampaign);
  }
}
