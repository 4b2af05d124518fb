package io.tally.event;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;

/**
 * Generated text made of what passes one parser and breaks the next: NUL and other control
 * characters, lone and paired surrogates, 4-byte and non-ASCII letters, the punctuation of host
 * names, URLs and CSV, and lengths around each bound. jqwik's own string generators rarely make
 * these, so every property test that takes text from outside asks for them here (other modules
 * through this module's test jar).
 */
public final class HostileText {

  /** The pieces every composed text is made of, besides runs of letters and any characters. */
  public static final List<String> PIECES =
      List.of(
          "\u0000",
          "\t",
          "\n",
          "\r",
          "\u007f",
          "\u0085",
          "\u00a0",
          "\u2028",
          "\ud800",
          "\udfff",
          "\ud83d\ude00",
          "é",
          "ß",
          "ü",
          "ı",
          "\u212a",
          "\uFFFF",
          "\uFFFD",
          ".",
          "-",
          "_",
          "[",
          "]",
          ":",
          "@",
          "%",
          "/",
          "\\",
          "?",
          "#",
          "\"",
          ",",
          " ");

  private HostileText() {}

  /**
   * Text composed of {@link #PIECES}, {@code extraPieces}, runs of up to 70 letters (past a host
   * label's bound) and short runs of any characters; or, for each of {@code bounds}, text of one
   * character less, as many, and one more, of letters, dots, hyphens, NUL and surrogates.
   */
  public static Arbitrary<String> of(List<String> extraPieces, int... bounds) {
    List<String> pieces = new ArrayList<>(PIECES);
    pieces.addAll(extraPieces);
    Arbitrary<String> piece =
        Arbitraries.oneOf(
            Arbitraries.of(pieces),
            Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(70),
            Arbitraries.strings().all().ofMaxLength(20));
    Arbitrary<String> composed = piece.list().ofMaxSize(40).map(list -> String.join("", list));
    if (bounds.length == 0) {
      return composed;
    }
    Arbitrary<String> nearBounds =
        Arbitraries.of(Arrays.stream(bounds).boxed().toList())
            .flatMap(
                bound ->
                    Arbitraries.of(bound - 1, bound, bound + 1)
                        .flatMap(
                            length ->
                                Arbitraries.strings()
                                    .withCharRange('a', 'z')
                                    .withChars('.', '-', '\u0000', '\ud83d', '\ude00', '\ud800')
                                    .ofLength(length)));
    return Arbitraries.oneOf(composed, nearBounds);
  }

  /** {@link #of(List, int...)} without pieces of the caller's own. */
  public static Arbitrary<String> of(int... bounds) {
    return of(List.of(), bounds);
  }
}
