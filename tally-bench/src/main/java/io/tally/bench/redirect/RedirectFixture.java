package io.tally.bench.redirect;

import io.tally.local.LocalServices;
import io.tally.redirect.RedirectWebConfig;
import io.tally.redirect.RedirectWebServer;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The links the redirect benchmarks ask for, and redirect-web servers started on the benchmark's
 * stack.
 */
public final class RedirectFixture {

  static final String HOT_CODE = "hotlink";

  /** The links and stats API's key of the servers started here. */
  public static final String API_KEY = "bench-api-key-0123456789abcdefghijklm";

  private RedirectFixture() {}

  /** The codes of the spread workload: {@code z0000}, {@code z0001}, ... */
  static List<String> spreadCodes(int links) {
    List<String> codes = new ArrayList<>(links);
    for (int i = 0; i < links; i++) {
      codes.add(String.format(Locale.ROOT, "z%04d", i));
    }
    return codes;
  }

  /**
   * Inserts the hot link and the spread links (straight into the table: the API is not what is
   * measured).
   */
  public static void createLinks(LocalServices stack, List<String> spread) throws SQLException {
    List<String> all = new ArrayList<>(spread);
    all.add(HOT_CODE);
    stack.insertLinks(
        all, code -> "https://example.com/articles/" + code + "?utm_source=tally-bench");
  }

  /** A server on the stack that counts clicks as {@code mode} says, on a free port. */
  public static RedirectWebServer start(LocalServices stack, CountingMode mode) {
    return mode.start(
        RedirectWebConfig.fromEnv(
            stack.redirectWebEnv(API_KEY, "bench-ip-hash-secret-0123456789abcdef")));
  }
}
