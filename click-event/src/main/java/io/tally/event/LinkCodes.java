package io.tally.event;

import java.util.regex.Pattern;

/** The shape of a link code, shared by the service that makes codes and the jobs that validate events. */
public final class LinkCodes {

  /** Codes are URL-safe and at most 64 characters; generated ones are shorter. */
  public static final Pattern PATTERN = Pattern.compile("[A-Za-z0-9_-]{3,64}");

  private LinkCodes() {}

  public static boolean isValid(String code) {
    return code != null && PATTERN.matcher(code).matches();
  }
}
