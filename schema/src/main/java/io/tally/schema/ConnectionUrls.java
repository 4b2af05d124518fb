package io.tally.schema;

import java.util.regex.Pattern;

/**
 * Connection URLs as they may be logged: a password in the URL's user info ({@code
 * redis://:secret@host}) or among its parameters ({@code jdbc:postgresql://h/db?password=secret})
 * is replaced by {@code ***}.
 */
public final class ConnectionUrls {

  private static final Pattern USER_INFO_PASSWORD = Pattern.compile("(//[^/@:?#]*:)[^/@?#]*@");
  private static final Pattern PASSWORD_PARAMETER =
      Pattern.compile("((?:[?&;]|^)(?i:password|sslpassword|pass|pwd)=)[^&;]*");

  private ConnectionUrls() {}

  /** The URL with every password in it replaced by {@code ***}. */
  public static String redacted(String url) {
    if (url == null) {
      return null;
    }
    String withoutUserInfo = USER_INFO_PASSWORD.matcher(url).replaceAll("$1***@");
    return PASSWORD_PARAMETER.matcher(withoutUserInfo).replaceAll("$1***");
  }
}
