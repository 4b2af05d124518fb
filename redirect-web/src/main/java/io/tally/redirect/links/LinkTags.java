package io.tally.redirect.links;

import io.tally.redirect.http.ApiException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The tags a link may carry, bounded as migration V17 bounds them: at most {@value #MAX_TAGS}, each
 * 1 to 32 letters, digits, dots, dashes and underscores, starting with a letter or digit.
 */
public final class LinkTags {

  public static final int MAX_TAGS = 10;

  public static final Pattern PATTERN = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,31}");

  private LinkTags() {}

  /**
   * The tags as stored: each checked, repeats dropped, the order kept.
   *
   * @throws ApiException 400 naming the first tag refused, or the count
   */
  public static List<String> checked(List<String> tags) {
    Set<String> kept = new LinkedHashSet<>();
    for (String tag : tags) {
      if (tag == null || !PATTERN.matcher(tag).matches()) {
        throw new ApiException(
            400,
            "a tag must be 1 to 32 letters, digits, dots, dashes or underscores, starting with a"
                + " letter or digit, not "
                + (tag == null ? "null" : "'" + ApiException.excerpt(tag) + "'"));
      }
      kept.add(tag);
    }
    if (kept.size() > MAX_TAGS) {
      throw new ApiException(400, "a link has at most " + MAX_TAGS + " tags, not " + kept.size());
    }
    return List.copyOf(kept);
  }
}
