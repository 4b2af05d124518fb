package io.tally.redirect;

import io.tally.event.ClickEvent;
import io.tally.event.ClickFields;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The query string a click brought on a short URL ({@code /abc?utm_source=newsletter}): passed on
 * to the link's target, and where the click's campaign tags come from.
 *
 * <p>Passed on, it is merged with the target's own query: the target's parameters stay in their
 * order, then the short URL's follow in theirs. A short URL may set a campaign tag ({@code utm_*})
 * the target has again, so that one link can be tagged per channel, but no other parameter the
 * target has: whoever shares a short URL must not change where its target's {@code next} or {@code
 * redirect_uri} leads. Parameters travel as the client spelled them; only a character a URL may not
 * hold is percent-encoded, so nothing the client sends can end the {@code Location} header or
 * change the target's scheme, host or path. The target's fragment stays last.
 *
 * <p>A click's campaign is its {@code utm_source}, {@code utm_medium} and {@code utm_campaign}:
 * each from the short URL's query, else from the target's, as the target's page would read them
 * from the merged URL; each value decoded and made fit ({@link ClickFields#campaignValue}).
 */
final class ShortUrlQuery {

  /** The longest {@code Location} a redirect answers: a link's longest URL and a query as long. */
  static final int MAX_LOCATION = 2 * UrlPolicy.MAX_LENGTH;

  static final ShortUrlQuery NONE = new ShortUrlQuery(List.of());

  private static final String URL_CHARACTERS =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$'()*+,;=:@/?";

  /** One {@code name=value} as the client wrote it, and its name decoded. */
  private record Parameter(String name, String raw) {}

  private final List<Parameter> parameters;

  private ShortUrlQuery(List<Parameter> parameters) {
    this.parameters = parameters;
  }

  /** The query as the request's line carried it, without the {@code ?}; null or empty for none. */
  static ShortUrlQuery of(String rawQuery) {
    List<Parameter> parameters = parse(rawQuery);
    return parameters.isEmpty() ? NONE : new ShortUrlQuery(parameters);
  }

  /**
   * The target with this query merged into it, or null when the result would be longer than {@link
   * #MAX_LOCATION}.
   */
  String mergedInto(String target) {
    if (parameters.isEmpty()) {
      return target;
    }
    int fragmentAt = target.indexOf('#');
    String fragment = fragmentAt < 0 ? "" : target.substring(fragmentAt);
    String beforeFragment = fragmentAt < 0 ? target : target.substring(0, fragmentAt);
    int queryAt = beforeFragment.indexOf('?');
    String base = queryAt < 0 ? beforeFragment : beforeFragment.substring(0, queryAt);
    List<Parameter> targets =
        queryAt < 0 ? List.of() : parse(beforeFragment.substring(queryAt + 1));
    Set<String> targetNames = new HashSet<>();
    targets.forEach(p -> targetNames.add(p.name()));
    Set<String> retagged = new HashSet<>();
    for (Parameter p : parameters) {
      if (isCampaignTag(p.name())) {
        retagged.add(p.name());
      }
    }
    StringBuilder location = new StringBuilder(base.length() + 256).append(base);
    char separator = '?';
    for (Parameter kept : targets) {
      if (!retagged.contains(kept.name())) {
        location.append(separator).append(kept.raw());
        separator = '&';
      }
    }
    for (Parameter added : parameters) {
      if (retagged.contains(added.name()) || !targetNames.contains(added.name())) {
        location.append(separator);
        appendUrlSafe(location, added.raw());
        separator = '&';
      }
    }
    location.append(fragment);
    return location.length() > MAX_LOCATION ? null : location.toString();
  }

  /** The click's campaign tags: this query's, else the target's. */
  ClickEvent.Campaign campaign(String target) {
    if (parameters.isEmpty() && !target.contains("utm_")) {
      return ClickEvent.Campaign.NONE;
    }
    List<Parameter> targets = null;
    String[] tags = new String[3];
    String[] names = {"utm_source", "utm_medium", "utm_campaign"};
    for (int i = 0; i < names.length; i++) {
      String value = valueOf(parameters, names[i]);
      if (value == null) {
        if (targets == null) {
          targets = targetParameters(target);
        }
        value = valueOf(targets, names[i]);
      }
      tags[i] = ClickFields.campaignValue(value);
    }
    return new ClickEvent.Campaign(tags[0], tags[1], tags[2]);
  }

  private static boolean isCampaignTag(String name) {
    return name.startsWith("utm_");
  }

  private static List<Parameter> targetParameters(String target) {
    int fragmentAt = target.indexOf('#');
    String beforeFragment = fragmentAt < 0 ? target : target.substring(0, fragmentAt);
    int queryAt = beforeFragment.indexOf('?');
    return queryAt < 0 ? List.of() : parse(beforeFragment.substring(queryAt + 1));
  }

  /** The first value of a parameter, decoded; null when absent. */
  private static String valueOf(List<Parameter> parameters, String name) {
    for (Parameter p : parameters) {
      if (p.name().equals(name)) {
        int equals = p.raw().indexOf('=');
        return equals < 0 ? "" : decode(p.raw().substring(equals + 1));
      }
    }
    return null;
  }

  private static List<Parameter> parse(String rawQuery) {
    if (rawQuery == null || rawQuery.isEmpty()) {
      return List.of();
    }
    List<Parameter> parameters = new ArrayList<>();
    for (String raw : rawQuery.split("&")) {
      if (!raw.isEmpty()) {
        int equals = raw.indexOf('=');
        parameters.add(new Parameter(decode(equals < 0 ? raw : raw.substring(0, equals)), raw));
      }
    }
    return parameters;
  }

  /** Form-decodes a name or value; a malformed escape leaves the text as it came. */
  private static String decode(String raw) {
    try {
      return URLDecoder.decode(raw, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException malformed) {
      return raw;
    }
  }

  /** Appends {@code raw}, percent-encoding what a URL's query may not hold. */
  private static void appendUrlSafe(StringBuilder out, String raw) {
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (URL_CHARACTERS.indexOf(c) >= 0 || (c == '%' && isEscape(raw, i))) {
        out.append(c);
      } else {
        int end =
            Character.isHighSurrogate(c)
                    && i + 1 < raw.length()
                    && Character.isLowSurrogate(raw.charAt(i + 1))
                ? i + 2
                : i + 1;
        for (byte b : raw.substring(i, end).getBytes(StandardCharsets.UTF_8)) {
          out.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xF, 16)));
          out.append(Character.toUpperCase(Character.forDigit(b & 0xF, 16)));
        }
        i = end - 1;
      }
    }
  }

  private static boolean isEscape(String raw, int at) {
    return at + 2 < raw.length()
        && Character.digit(raw.charAt(at + 1), 16) >= 0
        && Character.digit(raw.charAt(at + 2), 16) >= 0;
  }
}
