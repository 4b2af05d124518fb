package io.tally.event;

import java.util.regex.Pattern;

/**
 * The shape of a link code, shared by the service that makes codes and the jobs that validate
 * events.
 */
public final class LinkCodes {

  private static final int MIN_LENGTH = 3;
  private static final int MAX_LENGTH = 64;

  /** Codes are URL-safe and at most 64 characters; generated ones are shorter. */
  public static final Pattern PATTERN =
      Pattern.compile("[A-Za-z0-9_-]{" + MIN_LENGTH + "," + MAX_LENGTH + "}");

  private LinkCodes() {}

  /**
   * Whether {@code code} matches {@link #PATTERN}. Checked by hand because it runs on every
   * redirect and every click the job reads, where a regex matcher was a tenth of the parse step's
   * time.
   */
  public static boolean isValid(String code) {
    if (code == null || code.length() < MIN_LENGTH || code.length() > MAX_LENGTH) {
      return false;
    }
    for (int i = 0; i < code.length(); i++) {
      char c = code.charAt(i);
      boolean allowed =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '_'
              || c == '-';
      if (!allowed) {
        return false;
      }
    }
    return true;
  }
}
