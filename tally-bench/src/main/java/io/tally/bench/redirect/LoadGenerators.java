package io.tally.bench.redirect;

import java.util.Locale;

/** Names of the load generator's clients, for the command line. */
public final class LoadGenerators {

  private LoadGenerators() {}

  public static LoadGenerator.Client client(String name) {
    try {
      return LoadGenerator.Client.valueOf(name.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--client must be nio, socket or httpclient, not '" + name + "'");
    }
  }
}
