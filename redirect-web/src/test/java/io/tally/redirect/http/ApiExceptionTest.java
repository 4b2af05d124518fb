package io.tally.redirect.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Tests for {@link ApiException#excerpt}. */
class ApiExceptionTest {

  @Test
  void aShortValueIsRepeatedWholeALongOneCutWithoutSplittingACharacter() {
    assertThat(ApiException.excerpt("abc")).isEqualTo("abc");
    assertThat(ApiException.excerpt("x".repeat(64))).isEqualTo("x".repeat(64));
    assertThat(ApiException.excerpt("x".repeat(65))).isEqualTo("x".repeat(64) + "…");
    assertThat(ApiException.excerpt("x".repeat(63) + "\ud83d\ude00tail"))
        .as("a surrogate pair at the cut is left out whole")
        .isEqualTo("x".repeat(63) + "…");
  }
}
