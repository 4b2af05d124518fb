package io.tally.bench.redirect;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every connection of the load generator driven by one thread through a selector. A response that
 * completes is timed and the connection's next request is written at once; the thread sleeps only when
 * no connection has anything to read. Per request that is one write and one read system call, with no
 * thread to wake: far cheaper than a thread per connection, so the generator takes less of the CPU the
 * server needs.
 */
final class NioLoad {

  private static final Logger LOG = LoggerFactory.getLogger(NioLoad.class);

  private final LoadGenerator generator;
  private final LoadGenerator.Tally tally;
  private final int port;
  private final Workload workload;
  private final int connections;
  private final SplittableRandom random;
  private final ByteBuffer[] requests;

  NioLoad(LoadGenerator generator, LoadGenerator.Tally tally, int port, Workload workload, int connections, SplittableRandom random) {
    this.generator = generator;
    this.tally = tally;
    this.port = port;
    this.workload = workload;
    this.connections = connections;
    this.random = random;
    List<String> codes = workload.codes();
    requests = new ByteBuffer[codes.size()];
    for (int i = 0; i < codes.size(); i++) {
      requests[i] = ByteBuffer.wrap(HttpConnection.get("/" + codes.get(i), "localhost:" + port, LoadGenerator.USER_AGENT))
          .asReadOnlyBuffer();
    }
  }

  /** One connection's state: the request in flight and the response read so far. */
  private static final class Conn {
    final SocketChannel channel;
    final ByteBuffer in = ByteBuffer.allocateDirect(16 * 1024);
    final byte[] scratch = new byte[16 * 1024];
    long sentAt;
    int phase;

    Conn(SocketChannel channel) {
      this.channel = channel;
    }
  }

  void run() {
    try (Selector selector = Selector.open()) {
      for (int i = 0; i < connections; i++) {
        open(selector);
      }
      while (generator.running()) {
        selector.select(100);
        Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
        while (keys.hasNext()) {
          SelectionKey key = keys.next();
          keys.remove();
          Conn conn = (Conn) key.attachment();
          try {
            int status = read(conn);
            if (status == 0) {
              continue;
            }
            long end = System.nanoTime();
            tally.response(conn.phase, status, end - conn.sentAt);
            generator.countSecond(end);
            if (generator.running()) {
              send(conn);
            }
          } catch (IOException e) {
            LOG.debug("connection failed", e);
            tally.response(conn.phase, -1, System.nanoTime() - conn.sentAt);
            key.cancel();
            conn.channel.close();
            if (generator.running()) {
              open(selector);
            }
          }
        }
      }
    } catch (IOException e) {
      LOG.error("load generator stopped", e);
    } finally {
      tally.finish();
    }
  }

  private void open(Selector selector) throws IOException {
    SocketChannel channel = SocketChannel.open(new InetSocketAddress("localhost", port));
    channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
    channel.configureBlocking(false);
    Conn conn = new Conn(channel);
    channel.register(selector, SelectionKey.OP_READ, conn);
    send(conn);
  }

  private void send(Conn conn) throws IOException {
    int p = generator.currentPhase();
    tally.enter(p);
    conn.phase = p;
    ByteBuffer request = requests[workload.next(random)].duplicate();
    conn.sentAt = System.nanoTime();
    while (request.hasRemaining()) {
      // A request is a couple of hundred bytes; the socket buffer takes it whole.
      if (conn.channel.write(request) == 0) {
        Thread.onSpinWait();
      }
    }
  }

  /** Reads what is there; returns the status once a whole response is in, 0 while it is not. */
  private static int read(Conn conn) throws IOException {
    int n = conn.channel.read(conn.in);
    if (n < 0) {
      throw new IOException("connection closed by the server");
    }
    int len = conn.in.position();
    byte[] b = conn.scratch;
    conn.in.flip();
    conn.in.get(b, 0, len);
    conn.in.clear();
    conn.in.put(b, 0, len);
    int headerEnd = -1;
    for (int i = 0; i + 3 < len; i++) {
      if (b[i] == '\r' && b[i + 1] == '\n' && b[i + 2] == '\r' && b[i + 3] == '\n') {
        headerEnd = i;
        break;
      }
    }
    if (headerEnd < 0) {
      return 0;
    }
    long contentLength = 0;
    boolean chunked = false;
    int line = 0;
    while (line < headerEnd) {
      int eol = line;
      while (eol < headerEnd + 2 && b[eol] != '\n') {
        eol++;
      }
      if (matches(b, line, "content-length:")) {
        contentLength = 0;
        for (int i = line + 15; i < eol; i++) {
          if (b[i] >= '0' && b[i] <= '9') {
            contentLength = contentLength * 10 + (b[i] - '0');
          }
        }
      } else if (matches(b, line, "transfer-encoding:")) {
        chunked = true;
      }
      line = eol + 1;
    }
    int bodyStart = headerEnd + 4;
    int responseEnd;
    if (chunked) {
      // Only the last chunk marker is looked for: redirect responses carry no body worth parsing.
      responseEnd = -1;
      for (int i = bodyStart; i + 4 < len; i++) {
        if (b[i] == '0' && b[i + 1] == '\r' && b[i + 2] == '\n' && b[i + 3] == '\r' && b[i + 4] == '\n'
            && (i == bodyStart || b[i - 1] == '\n')) {
          responseEnd = i + 5;
          break;
        }
      }
      if (responseEnd < 0) {
        return 0;
      }
    } else {
      responseEnd = (int) (bodyStart + contentLength);
      if (len < responseEnd) {
        return 0;
      }
    }
    if (len > responseEnd) {
      throw new IOException("more bytes than one response: the server answered without being asked");
    }
    conn.in.clear();
    return (b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0');
  }

  private static boolean matches(byte[] b, int at, String lowerPrefix) {
    for (int i = 0; i < lowerPrefix.length(); i++) {
      if (Character.toLowerCase((char) b[at + i]) != lowerPrefix.charAt(i)) {
        return false;
      }
    }
    return true;
  }
}
