package io.tally.redirect.links;

import java.security.SecureRandom;

/**
 * Makes link codes: 8 characters from the 62 URL-safe letters and digits, drawn from a secure
 * random source, so about 2.2 × 10^14 codes that cannot be enumerated or predicted from one
 * another.
 */
public final class LinkCodeGenerator {

  static final int LENGTH = 8;
  private static final char[] ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

  private final SecureRandom random = new SecureRandom();

  public String next() {
    char[] code = new char[LENGTH];
    for (int i = 0; i < LENGTH; i++) {
      code[i] = ALPHABET[random.nextInt(ALPHABET.length)];
    }
    return new String(code);
  }
}
