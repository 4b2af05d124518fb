package io.tally.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The logins deploy/postgres/tally-logins.sh makes, each with the role it is granted. */
final class PostgresLogins {

  static final Path SCRIPT = Path.of("postgres", "tally-logins.sh");
  private static final Pattern PAIR = Pattern.compile("\\('([a-z_]+)', '([a-z_]+)'\\)");

  private PostgresLogins() {}

  /** Role by login. */
  static Map<String, String> roles() {
    try {
      Map<String, String> roles = new LinkedHashMap<>();
      Matcher m = PAIR.matcher(Files.readString(SCRIPT));
      while (m.find()) {
        roles.put(m.group(1), m.group(2));
      }
      return roles;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
