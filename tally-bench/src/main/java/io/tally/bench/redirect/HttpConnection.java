package io.tally.bench.redirect;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One keep-alive HTTP/1.1 connection over a plain socket, sending prebuilt requests and reading each
 * response just far enough to know its status and skip its body. It allocates nothing per request, so
 * the load generator spends as little of the shared CPU as it can.
 */
final class HttpConnection implements AutoCloseable {

  private final String host;
  private final int port;
  private final byte[] buf = new byte[16 * 1024];
  private Socket socket;
  private InputStream in;
  private OutputStream out;
  private int len;

  HttpConnection(String host, int port) throws IOException {
    this.host = host;
    this.port = port;
    connect();
  }

  private void connect() throws IOException {
    socket = new Socket();
    socket.setTcpNoDelay(true);
    socket.connect(new InetSocketAddress(host, port), 5_000);
    socket.setSoTimeout(60_000);
    in = socket.getInputStream();
    out = socket.getOutputStream();
    len = 0;
  }

  /** A GET request for {@code path}, as bytes to send again and again. */
  static byte[] get(String path, String host, String userAgent) {
    return ("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: " + userAgent
        + "\r\nAccept: */*\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
  }

  /** Sends {@code request} and returns the response's status code; reconnects when the server closed. */
  int exchange(byte[] request) throws IOException {
    out.write(request);
    out.flush();
    int headerEnd = readHeaders();
    int status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
    long contentLength = 0;
    boolean chunked = false;
    boolean close = false;
    int line = indexOf(buf, 0, headerEnd, (byte) '\n') + 1;
    while (line < headerEnd) {
      int eol = indexOf(buf, line, headerEnd + 2, (byte) '\n');
      if (startsWithIgnoreCase(line, "content-length:")) {
        contentLength = parseLong(line + 15, eol);
      } else if (startsWithIgnoreCase(line, "transfer-encoding:")) {
        chunked = containsIgnoreCase(line, eol, "chunked");
      } else if (startsWithIgnoreCase(line, "connection:")) {
        close = containsIgnoreCase(line, eol, "close");
      }
      line = eol + 1;
    }
    int bodyStart = headerEnd + 4;
    consume(bodyStart);
    if (chunked) {
      skipChunked();
    } else {
      skip(contentLength);
    }
    if (close) {
      reconnect();
    }
    return status;
  }

  /** Reads until the end of the headers; returns the index of the blank line's CRLF pair. */
  private int readHeaders() throws IOException {
    int searchFrom = 0;
    while (true) {
      int end = indexOfCrlfCrlf(searchFrom);
      if (end >= 0) {
        return end;
      }
      searchFrom = Math.max(0, len - 3);
      fill();
    }
  }

  private void fill() throws IOException {
    if (len == buf.length) {
      throw new IOException("response headers larger than " + buf.length + " bytes");
    }
    int n = in.read(buf, len, buf.length - len);
    if (n < 0) {
      throw new IOException("connection closed by the server");
    }
    len += n;
  }

  /** Drops the first {@code n} buffered bytes. */
  private void consume(int n) {
    System.arraycopy(buf, n, buf, 0, len - n);
    len -= n;
  }

  private void skip(long n) throws IOException {
    while (n > 0) {
      if (len == 0) {
        fill();
      }
      int take = (int) Math.min(n, len);
      consume(take);
      n -= take;
    }
  }

  private void skipChunked() throws IOException {
    while (true) {
      int eol;
      while ((eol = indexOf(buf, 0, len, (byte) '\n')) < 0) {
        fill();
      }
      long size = Long.parseLong(new String(buf, 0, eol, StandardCharsets.US_ASCII).trim().split(";")[0], 16);
      consume(eol + 1);
      skip(size + 2);
      if (size == 0) {
        return;
      }
    }
  }

  private void reconnect() throws IOException {
    socket.close();
    connect();
  }

  private int indexOfCrlfCrlf(int from) {
    for (int i = from; i + 3 < len; i++) {
      if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
        return i;
      }
    }
    return -1;
  }

  private static int indexOf(byte[] b, int from, int to, byte value) {
    for (int i = from; i < Math.min(to, b.length); i++) {
      if (b[i] == value) {
        return i;
      }
    }
    return -1;
  }

  private boolean startsWithIgnoreCase(int at, String prefix) {
    if (at + prefix.length() > len) {
      return false;
    }
    for (int i = 0; i < prefix.length(); i++) {
      if (Character.toLowerCase((char) buf[at + i]) != prefix.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  private boolean containsIgnoreCase(int from, int to, String word) {
    return new String(buf, from, to - from, StandardCharsets.US_ASCII).toLowerCase(java.util.Locale.ROOT).contains(word);
  }

  private long parseLong(int from, int to) {
    long value = 0;
    for (int i = from; i < to; i++) {
      byte b = buf[i];
      if (b >= '0' && b <= '9') {
        value = value * 10 + (b - '0');
      }
    }
    return value;
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }
}
