package io.tally.redirect.http;

import io.javalin.http.Context;
import io.javalin.http.Header;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The API keys of {@code TALLY_API_KEYS}, each with its scope, and the checks of a request's key,
 * which take the same time whether a key is close to right or not.
 *
 * <p>{@code TALLY_API_KEYS} is a comma-separated list of keys, each {@code read:KEY} or {@code
 * write:KEY}; a key without a scope may write, as every key could before scopes. A {@code read} key
 * reads stats and lists links; a {@code write} key also creates and disables links.
 */
public final class ApiKeys {

  /** What a key may do; {@link #WRITE} includes {@link #READ}. */
  public enum Scope {
    READ,
    WRITE;

    boolean includes(Scope needed) {
      return this == WRITE || needed == READ;
    }

    public String lowerCase() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** A key presented with a request and accepted: its scope, and an id that is not the key. */
  public record Holder(Scope scope, String id) {}

  static final int MIN_KEY_LENGTH = 32;

  /** How to make a key, for the messages that refuse one. */
  public static final String HOW_TO_MAKE_ONE = "make one with: openssl rand -base64 32";

  private static final Pattern KEY = Pattern.compile("[A-Za-z0-9._~+/=-]+");

  private final Map<String, Scope> keys;

  private ApiKeys(Map<String, Scope> keys) {
    this.keys = keys;
  }

  /**
   * Reads {@code TALLY_API_KEYS}.
   *
   * @throws IllegalArgumentException naming what is wrong, without the key itself: no key, a key
   *     shorter than {@value #MIN_KEY_LENGTH} characters, a placeholder, or an unknown scope
   */
  public static ApiKeys parse(String csv) {
    Map<String, Scope> keys = new LinkedHashMap<>();
    int position = 0;
    for (String entry : csv == null ? new String[0] : csv.split(",")) {
      String trimmed = entry.trim();
      if (trimmed.isEmpty()) {
        continue;
      }
      position++;
      Scope scope = Scope.WRITE;
      String key = trimmed;
      int colon = trimmed.indexOf(':');
      if (colon >= 0) {
        String name = trimmed.substring(0, colon).trim().toLowerCase(Locale.ROOT);
        key = trimmed.substring(colon + 1).trim();
        scope =
            switch (name) {
              case "read" -> Scope.READ;
              case "write" -> Scope.WRITE;
              default ->
                  throw new IllegalArgumentException(
                      "TALLY_API_KEYS: key "
                          + position
                          + " has the scope '"
                          + name
                          + "'; a scope is read: or write:");
            };
      }
      check(key, position);
      keys.put(key, scope);
    }
    if (keys.isEmpty()) {
      throw new IllegalArgumentException(
          "TALLY_API_KEYS is required: at least one key for the links API; " + HOW_TO_MAKE_ONE);
    }
    return new ApiKeys(Map.copyOf(keys));
  }

  private static void check(String key, int position) {
    String which = "TALLY_API_KEYS: key " + position;
    if (key.length() < MIN_KEY_LENGTH) {
      throw new IllegalArgumentException(
          which
              + " has "
              + key.length()
              + " characters, fewer than "
              + MIN_KEY_LENGTH
              + "; "
              + HOW_TO_MAKE_ONE);
    }
    if (key.toLowerCase(Locale.ROOT).contains("change-me")) {
      throw new IllegalArgumentException(
          which + " is a placeholder (it contains 'change-me'); " + HOW_TO_MAKE_ONE);
    }
    if (!KEY.matcher(key).matches()) {
      throw new IllegalArgumentException(
          which + " may hold only letters, digits and . _ ~ + / = -; " + HOW_TO_MAKE_ONE);
    }
  }

  /** How many keys there are. */
  public int size() {
    return keys.size();
  }

  /** How many keys have {@code scope}. */
  public long count(Scope scope) {
    return keys.values().stream().filter(scope::equals).count();
  }

  /** The scope of a key, if it is one of these. */
  public Optional<Scope> scopeOf(String key) {
    return match(key).map(Holder::scope);
  }

  /** The holder of the request's key, if it carries a valid one; refuses nothing. */
  public Optional<Holder> presented(Context ctx) {
    String key = bearerKey(ctx);
    return key == null ? Optional.empty() : match(key);
  }

  /**
   * The holder of the request's key, refusing the request with 401 (no key), 403 (a wrong key) or
   * 403 (a key that may not do this) otherwise.
   */
  public Holder require(Context ctx, Scope needed) {
    String key = bearerKey(ctx);
    if (key == null) {
      ctx.header(Header.WWW_AUTHENTICATE, "Bearer");
      throw new ApiException(401, "an API key is required: Authorization: Bearer <key>");
    }
    Holder holder = match(key).orElseThrow(() -> new ApiException(403, "the API key is not valid"));
    if (!holder.scope().includes(needed)) {
      throw new ApiException(
          403,
          "this API key may only "
              + holder.scope().lowerCase()
              + "; this needs a "
              + needed.lowerCase()
              + " key");
    }
    return holder;
  }

  /** Every key is compared, so that the time taken does not say which came close. */
  private Optional<Holder> match(String presented) {
    byte[] candidate = presented.getBytes(StandardCharsets.UTF_8);
    Scope found = null;
    for (Map.Entry<String, Scope> entry : keys.entrySet()) {
      if (MessageDigest.isEqual(entry.getKey().getBytes(StandardCharsets.UTF_8), candidate)) {
        found = entry.getValue();
      }
    }
    return found == null ? Optional.empty() : Optional.of(new Holder(found, idOf(presented)));
  }

  /** A short id of a key, for per-key limits: the start of its SHA-256, never the key. */
  private static String idOf(String key) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
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
}
