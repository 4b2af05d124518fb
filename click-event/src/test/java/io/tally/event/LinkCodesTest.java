package io.tally.event;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Tests for {@link LinkCodes}. */
class LinkCodesTest {

  @Test
  void acceptsUrlSafeCodesOfThreeToSixtyFourCharacters() {
    assertThat(LinkCodes.isValid("abc")).isTrue();
    assertThat(LinkCodes.isValid("A-z_09")).isTrue();
    assertThat(LinkCodes.isValid("x".repeat(64))).isTrue();

    assertThat(LinkCodes.isValid(null)).isFalse();
    assertThat(LinkCodes.isValid("ab")).isFalse();
    assertThat(LinkCodes.isValid("x".repeat(65))).isFalse();
    assertThat(LinkCodes.isValid("a/b")).isFalse();
    assertThat(LinkCodes.isValid("abc ")).isFalse();
    assertThat(LinkCodes.isValid("çava")).isFalse();
  }

  @Test
  void agreesWithThePublishedPatternOnRandomStrings() {
    String alphabet = "abzAZ09_-./ %é\u0000~+";
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < 50_000; i++) {
      StringBuilder s = new StringBuilder();
      int length = random.nextInt(70);
      for (int j = 0; j < length; j++) {
        // Mostly allowed characters, so that many strings are valid too.
        s.append(
            random.nextInt(10) < 9
                ? alphabet.charAt(random.nextInt(7))
                : alphabet.charAt(random.nextInt(alphabet.length())));
      }
      String code = s.toString();
      assertThat(LinkCodes.isValid(code))
          .as(code)
          .isEqualTo(LinkCodes.PATTERN.matcher(code).matches());
    }
  }
}
