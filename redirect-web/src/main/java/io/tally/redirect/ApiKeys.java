package io.tally.redirect;

import io.javalin.http.Context;
import io.javalin.http.Header;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;

/** API key checks that take the same time whether a key is close to right or not. */
public final class ApiKeys {

  private ApiKeys() {}

  static boolean matches(Set<String> keys, String presented) {
    byte[] candidate = presented.getBytes(StandardCharsets.UTF_8);
    boolean match = false;
    for (String key : keys) {
      match |= MessageDigest.isEqual(key.getBytes(StandardCharsets.UTF_8), candidate);
    }
    return match;
  }

  /** Whether the request carries one of {@code keys}; refuses nothing. */
  public static boolean presented(Context ctx, Set<String> keys) {
    String key = bearerKey(ctx);
    return key != null && matches(keys, key);
  }

  /** The key of a {@code Authorization: Bearer} header, or null when there is none. */
  private static String bearerKey(Context ctx) {
    String authorization = ctx.header(Header.AUTHORIZATION);
    // The scheme name is case-insensitive (RFC 9110); the key after it is not.
    if (authorization == null
        || !authorization.regionMatches(true, 0, "Bearer ", 0, "Bearer ".length())) {
      return null;
    }
    return authorization.substring("Bearer ".length()).trim();
  }

  /**
   * Refuses the request with 401 (no key) or 403 (a wrong key) unless it carries one of {@code
   * keys}.
   */
  public static void require(Context ctx, Set<String> keys) {
    String key = bearerKey(ctx);
    if (key == null) {
      ctx.header(Header.WWW_AUTHENTICATE, "Bearer");
      throw new ApiException(401, "an API key is required: Authorization: Bearer <key>");
    }
    if (!matches(keys, key)) {
      throw new ApiException(403, "the API key is not valid");
    }
  }
}
