package io.tally.chaos;

import io.tally.testing.ClickEvents;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * One HTTP/1.1 {@code GET} written byte for byte on a socket of its own, so that its headers may
 * hold what {@link java.net.http.HttpClient} refuses to send: control characters, NUL, bytes that
 * are not UTF-8. A client can send all of these; a server must not take them further than it can.
 */
final class RawHttp {

  private static final int TIMEOUT_MILLIS = 10_000;

  /** The headers of a desktop browser's request. */
  static final Map<String, byte[]> BROWSER =
      Map.of("User-Agent", ClickEvents.DESKTOP_BROWSER.getBytes(StandardCharsets.UTF_8));

  private RawHttp() {}

  /**
   * Sends {@code GET path} to {@code localhost:port} with these headers (names as given, values as
   * raw bytes) and returns the answer's status, or -1 when none came within the timeout.
   */
  static int get(int port, String path, Map<String, byte[]> headers) {
    ByteArrayOutputStream request = new ByteArrayOutputStream();
    request.writeBytes(ascii("GET " + path + " HTTP/1.1\r\nHost: localhost:" + port + "\r\n"));
    headers.forEach(
        (name, value) -> {
          request.writeBytes(ascii(name + ": "));
          request.writeBytes(value);
          request.writeBytes(ascii("\r\n"));
        });
    request.writeBytes(ascii("Connection: close\r\n\r\n"));
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("localhost", port), TIMEOUT_MILLIS);
      socket.setSoTimeout(TIMEOUT_MILLIS);
      OutputStream out = socket.getOutputStream();
      out.write(request.toByteArray());
      out.flush();
      return status(socket.getInputStream());
    } catch (IOException e) {
      return -1;
    }
  }

  /** The status of a status line such as {@code HTTP/1.1 302 Found}, or -1. */
  private static int status(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int b = in.read(); b >= 0 && b != '\n' && line.length() < 200; b = in.read()) {
      line.append((char) b);
    }
    String[] parts = line.toString().trim().split(" ", 3);
    boolean isStatusLine =
        parts.length >= 2 && parts[0].startsWith("HTTP/") && parts[1].matches("\\d{3}");
    return isStatusLine ? Integer.parseInt(parts[1]) : -1;
  }

  static byte[] ascii(String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }
}
