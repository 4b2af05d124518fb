package io.tally.redirect;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import java.util.Locale;
import java.util.regex.Pattern;
import ua_parser.Client;
import ua_parser.Parser;

/**
 * Names the browser and device behind a user agent and tells whether it is a bot, using uap-java's
 * parser (the ua-parser project's shared regexes). Parsing is regex-heavy, and a handful of user agents
 * make up most traffic, so results are cached.
 */
public final class UserAgentClassifier {

  /** What a user agent says about its client. */
  public record Classification(String family, String device, boolean bot) {}

  /**
   * Link-preview fetchers and monitors that uap does not always call spiders. They fetch a link when it
   * is pasted into a chat, not when a person follows it. The catch-all {@code bot\b} spares Cubot, a phone
   * brand whose models ("Cubot Note 30") would otherwise turn their owners' clicks into bot clicks.
   */
  private static final Pattern PREVIEW_FETCHERS =
      Pattern.compile(
          "facebookexternalhit|facebookcatalog|slackbot|slack-imgproxy|twitterbot|discordbot|telegrambot|whatsapp"
              + "|linkedinbot|skypeuripreview|embedly|pinterestbot|redditbot|applebot|bingpreview|vkshare"
              + "|iframely|mastodon|(?<!cu)bot\\b|crawler|spider|headlesschrome");

  private static final Classification UNKNOWN = new Classification("Other", "Other", false);

  private final Parser parser = new Parser();
  private final LoadingCache<String, Classification> cache =
      Caffeine.newBuilder().maximumSize(10_000).build(this::parse);

  public Classification classify(String userAgent) {
    if (userAgent == null || userAgent.isBlank()) {
      return UNKNOWN;
    }
    if (userAgent.length() > 512) {
      userAgent = userAgent.substring(0, 512);
    }
    return cache.get(userAgent);
  }

  private Classification parse(String userAgent) {
    Client client = parser.parse(userAgent);
    if (client == null) {
      return UNKNOWN;
    }
    String family = client.userAgent == null ? "Other" : client.userAgent.family;
    String device = client.device == null ? "Other" : client.device.family;
    boolean bot = "Spider".equals(device) || PREVIEW_FETCHERS.matcher(userAgent.toLowerCase(Locale.ROOT)).find();
    return new Classification(family, device, bot);
  }
}
