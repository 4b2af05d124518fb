package io.tally.counting.classify;

/**
 * Reduces a user agent to what its classification depends on, so that agents that differ only in
 * what a client can vary for free meet one cache entry and cost one parse: a browser's minor, build
 * and patch numbers, long numbers, and random tokens. Browser, OS and device families never depend
 * on them; a device's model number (a Nexus 7 is a tablet, a Nexus 5 a phone) and a version's first
 * number are kept.
 *
 * <p>Rules, on runs of ASCII letters and digits:
 *
 * <ul>
 *   <li>a run of digits that continues a version (right after a run of digits only and a {@code .}
 *       or {@code _}) becomes {@code 1}, or stays {@code 0} when it is zero: {@code
 *       Chrome/131.0.6778.86} reads {@code Chrome/131.0.1.1}, {@code iPhone OS 17_5_1} reads {@code
 *       iPhone OS 17_1_1}. Zeros are kept because they mean something: {@code Chrome/86.0.0.0} is
 *       not the agent of a browser, a reduced {@code Chrome/131.0.0.0} is;
 *   <li>any other run of {@value #LONG_NUMBER} or more digits becomes {@code 1} (builds and dates);
 *   <li>a run of letters and digits that looks random becomes {@code x}: {@value #RANDOM_TOKEN} or
 *       more hexadecimal characters, digits and letters both ({@code 9f3ab27c}), or {@value
 *       #LONG_TOKEN} or more, four of them digits or more, that switch between letters and digits
 *       four times or more. Product names with a digit in them ({@code Site24x7}, {@code
 *       Streamline3Bot}) stay.
 * </ul>
 *
 * Everything else is kept as it is, case included. The result depends on the agent alone, so the
 * stream and a recount reduce every agent alike.
 */
public final class AgentReduction {

  static final int LONG_NUMBER = 5;
  static final int RANDOM_TOKEN = 8;
  static final int LONG_TOKEN = 16;

  private AgentReduction() {}

  /** The agent with its free variations replaced; the same instance when there were none. */
  public static String reduce(String agent) {
    StringBuilder out = null;
    int n = agent.length();
    int copiedUpTo = 0;
    boolean afterVersionSeparator = false;
    int numberEnd = -1;
    int i = 0;
    while (i < n) {
      char c = agent.charAt(i);
      if (!isAsciiAlphanumeric(c)) {
        afterVersionSeparator = (c == '.' || c == '_') && i == numberEnd && isDigitAt(agent, i);
        i++;
        continue;
      }
      int start = i;
      int digits = 0;
      int switches = 0;
      boolean hex = true;
      boolean zero = true;
      boolean lastWasDigit = isDigit(c);
      while (i < n && isAsciiAlphanumeric(agent.charAt(i))) {
        char d = agent.charAt(i);
        boolean digit = isDigit(d);
        if (digit) {
          digits++;
          zero &= d == '0';
        } else {
          hex &= (d >= 'a' && d <= 'f') || (d >= 'A' && d <= 'F');
        }
        if (digit != lastWasDigit) {
          switches++;
          lastWasDigit = digit;
        }
        i++;
      }
      int length = i - start;
      numberEnd = digits == length ? i : -1;
      String replacement = replacement(length, digits, switches, hex, zero, afterVersionSeparator);
      afterVersionSeparator = false;
      if (replacement != null && !agent.regionMatches(start, replacement, 0, length)) {
        if (out == null) {
          out = new StringBuilder(n);
        }
        out.append(agent, copiedUpTo, start).append(replacement);
        copiedUpTo = i;
      }
    }
    if (out == null) {
      return agent;
    }
    return out.append(agent, copiedUpTo, n).toString();
  }

  private static String replacement(
      int length, int digits, int switches, boolean hex, boolean zero, boolean continuesVersion) {
    if (digits == length) {
      if (continuesVersion) {
        return zero ? "0" : "1";
      }
      return length >= LONG_NUMBER ? "1" : null;
    }
    int letters = length - digits;
    boolean hexToken = hex && length >= RANDOM_TOKEN && digits > 0 && letters > 0;
    boolean longToken = length >= LONG_TOKEN && digits >= 4 && switches >= 4;
    return hexToken || longToken ? "x" : null;
  }

  private static boolean isDigitAt(String agent, int separator) {
    return separator + 1 < agent.length() && isDigit(agent.charAt(separator + 1));
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static boolean isAsciiAlphanumeric(char c) {
    return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }
}
