package io.tally.counting.classify;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * What the dashboard keeps of a click's user agent: a few coarse, low-cardinality values, never the
 * agent itself. A bot always has device {@value #BOT_DEVICE} and browser and os {@value #OTHER}, so
 * the human figures are not diluted by agents that only pose as browsers.
 *
 * @param browser the browser family: {@code Chrome}, {@code Safari}, {@code Edge}, {@code Firefox},
 *     {@code Samsung Internet}, {@code Opera}, {@code In-App} (an app's web view, such as
 *     Instagram's or Facebook's) or {@value #OTHER}
 * @param os the operating system family: {@code Windows}, {@code macOS}, {@code iOS} (iPadOS
 *     included), {@code Android}, {@code Linux}, {@code ChromeOS} or {@value #OTHER}
 * @param device the device type: {@code desktop}, {@code phone}, {@code tablet}, {@code tv}, {@code
 *     console}, {@value #BOT_DEVICE} or {@code other}
 * @param botKind {@code ""} for a person, otherwise the {@link BotKind#label()} of why the click is
 *     a bot's
 */
public record UserAgentFacts(String browser, String os, String device, String botKind) {

  /** The browser or os family of anything not in the short list. */
  public static final String OTHER = "Other";

  /** The device type of every bot. */
  public static final String BOT_DEVICE = "bot";

  /** Every browser family the classifier answers. */
  public static final List<String> BROWSERS =
      List.of("Chrome", "Safari", "Edge", "Firefox", "Samsung Internet", "Opera", "In-App", OTHER);

  /** Every operating-system family the classifier answers. */
  public static final List<String> OPERATING_SYSTEMS =
      List.of("Windows", "macOS", "iOS", "Android", "Linux", "ChromeOS", OTHER);

  /** Every device type the classifier answers. */
  public static final List<String> DEVICES =
      List.of("desktop", "phone", "tablet", "tv", "console", BOT_DEVICE, "other");

  /** The bot kind of a version-1 bot click, whose user agent was not kept to classify. */
  public static final String V1_BOT_KIND = "unclassified";

  /** Every bot kind the classifier answers, {@code ""} (a person) first. */
  public static final List<String> BOT_KINDS =
      Stream.concat(Stream.of(""), Arrays.stream(BotKind.values()).map(BotKind::label)).toList();

  public UserAgentFacts {
    Objects.requireNonNull(browser, "browser");
    Objects.requireNonNull(os, "os");
    Objects.requireNonNull(device, "device");
    Objects.requireNonNull(botKind, "botKind");
  }

  /** The facts of a bot of the given kind. */
  public static UserAgentFacts ofBot(BotKind kind) {
    return new UserAgentFacts(OTHER, OTHER, BOT_DEVICE, kind.label());
  }

  /** Whether the click was a bot's, of any kind. */
  public boolean bot() {
    return !botKind.isEmpty();
  }
}
