package io.tally.redirect.http;

/**
 * A request that is refused with a status and a message the client can act on; answered as JSON.
 */
public final class ApiException extends RuntimeException {

  private final int status;

  public ApiException(int status, String message) {
    super(message);
    this.status = status;
  }

  public int status() {
    return status;
  }

  /** The longest part of a client's value an error message repeats. */
  private static final int EXCERPT_LENGTH = 64;

  /**
   * A value a client sent, as an error message repeats it: whole when short, else its first {@value
   * #EXCERPT_LENGTH} characters and an ellipsis, so that a huge value cannot make a huge answer.
   */
  public static String excerpt(String value) {
    if (value.length() <= EXCERPT_LENGTH) {
      return value;
    }
    int end =
        Character.isHighSurrogate(value.charAt(EXCERPT_LENGTH - 1))
            ? EXCERPT_LENGTH - 1
            : EXCERPT_LENGTH;
    return value.substring(0, end) + "…";
  }
}
