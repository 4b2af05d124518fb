package io.tally.redirect;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;

/** API key checks that take the same time whether a key is close to right or not. */
final class ApiKeys {

  private ApiKeys() {}

  static boolean matches(Set<String> keys, String presented) {
    byte[] candidate = presented.getBytes(StandardCharsets.UTF_8);
    boolean match = false;
    for (String key : keys) {
      match |= MessageDigest.isEqual(key.getBytes(StandardCharsets.UTF_8), candidate);
    }
    return match;
  }
}
