package io.tally.local;

/**
 * Where a Flink cluster's REST API (and web UI) listens, as given to {@code --rest HOST:PORT}.
 *
 * @param host the host name or address
 * @param port the REST port
 */
public record RestEndpoint(String host, int port) {

  /** Reads {@code HOST:PORT}; fails with the expected form otherwise. */
  public static RestEndpoint parse(String hostAndPort) {
    int colon = hostAndPort.lastIndexOf(':');
    if (colon <= 0 || colon == hostAndPort.length() - 1) {
      throw new IllegalArgumentException("--rest takes HOST:PORT, not '" + hostAndPort + "'");
    }
    try {
      int port = Integer.parseInt(hostAndPort.substring(colon + 1));
      if (port <= 0 || port > 65535) {
        throw new NumberFormatException();
      }
      return new RestEndpoint(hostAndPort.substring(0, colon), port);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "--rest takes HOST:PORT with a port of 1-65535, not '" + hostAndPort + "'");
    }
  }

  public static RestEndpoint local(int port) {
    return new RestEndpoint("localhost", port);
  }

  public String url() {
    return "http://" + host + ":" + port;
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
