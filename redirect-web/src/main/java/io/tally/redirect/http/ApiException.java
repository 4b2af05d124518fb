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
}
