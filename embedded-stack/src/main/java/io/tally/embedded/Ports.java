package io.tally.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * Port checks done before a service binds, so that a taken port gives one clear message instead of
 * a stack trace.
 */
public final class Ports {

  private Ports() {}

  /** Thrown when a port a service needs is already in use. */
  public static final class PortInUseException extends IllegalStateException {
    public PortInUseException(String message) {
      super(message);
    }
  }

  /**
   * Returns {@code port} if it can be bound on loopback, a free ephemeral port if it is 0, and
   * throws {@link PortInUseException} naming the service and the environment variable that moves it
   * otherwise.
   */
  public static int requireFree(int port, String service, String envVar) {
    if (port == 0) {
      return ephemeral();
    }
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return port;
    } catch (IOException e) {
      throw new PortInUseException(
          "port "
              + port
              + " for "
              + service
              + " is already in use; stop what holds it or set "
              + envVar
              + " to another port");
    }
  }

  /** A port that was free a moment ago. */
  public static int ephemeral() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port", e);
    }
  }
}
