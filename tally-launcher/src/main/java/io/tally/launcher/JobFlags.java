package io.tally.launcher;

import java.util.ArrayList;
import java.util.List;

/**
 * A job's command-line flags: the user's, completed with defaults for the flags the user left out.
 */
final class JobFlags {

  private JobFlags() {}

  /**
   * {@code given}, then each {@code --name value} pair of {@code defaults} whose name {@code given}
   * lacks.
   */
  static List<String> withDefaults(List<String> given, List<String> defaults) {
    List<String> flags = new ArrayList<>(given);
    for (int i = 0; i + 1 < defaults.size(); i += 2) {
      String name = defaults.get(i);
      if (given.stream().noneMatch(f -> f.equals(name) || f.startsWith(name + "="))) {
        flags.add(name);
        flags.add(defaults.get(i + 1));
      }
    }
    return flags;
  }
}
