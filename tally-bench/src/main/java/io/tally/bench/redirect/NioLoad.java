package io.tally.bench.redirect;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every connection of the load generator driven by one thread through a selector. Per request that
 * is one write and one read system call, with no thread to wake: far cheaper than a thread per
 * connection or java.net.http, so the generator takes less of the CPU the server needs.
 *
 * <p>In a closed loop a response that completes is timed and the connection's next request is
 * written at once. At a fixed rate each connection has a schedule instead, one request every {@code
 * connections ÷ rate} seconds, staggered across connections; a request is written when it is due
 * and its connection is free, and its latency counts from when it was due, not from when it could
 * be written, in the phase it was due in. A server that falls behind thus shows its queueing delay
 * in the latency, which a closed loop would hide by sending less (coordinated omission).
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

  /** Nanoseconds between two requests of one connection at a fixed rate; 0 in a closed loop. */
  private final long interval;

  NioLoad(
      LoadGenerator generator,
      LoadGenerator.Tally tally,
      int port,
      Workload workload,
      int connections,
      SplittableRandom random,
      double ratePerSecond) {
    this.interval = ratePerSecond > 0 ? (long) (connections * 1e9 / ratePerSecond) : 0;
    this.generator = generator;
    this.tally = tally;
    this.port = port;
    this.workload = workload;
    this.connections = connections;
    this.random = random;
    List<String> codes = workload.codes();
    requests = new ByteBuffer[codes.size()];
    for (int i = 0; i < codes.size(); i++) {
      requests[i] =
          ByteBuffer.wrap(get("/" + codes.get(i), "localhost:" + port)).asReadOnlyBuffer();
    }
  }

  /** A GET request for {@code path}, as bytes to send again and again. */
  private static byte[] get(String path, String host) {
    return "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\nAccept: */*\r\n\r\n"
        .formatted(path, host, LoadGenerator.USER_AGENT)
        .getBytes(StandardCharsets.US_ASCII);
  }

  /** One connection's state: the request in flight and the response read so far. */
  private static final class Conn {
    final SocketChannel channel;
    final ByteBuffer in = ByteBuffer.allocateDirect(16 * 1024);
    final byte[] scratch = new byte[16 * 1024];

    /**
     * Where the request's latency starts: when it was written, or, at a fixed rate, when it was
     * due.
     */
    long timedFrom;

    /** At a fixed rate: when the next request is due. */
    long dueAt;

    boolean inFlight;
    int phase;

    Conn(SocketChannel channel) {
      this.channel = channel;
    }
  }

  void run() {
    List<Conn> paced = new ArrayList<>();
    try (Selector selector = Selector.open()) {
      long start = System.nanoTime();
      for (int i = 0; i < connections; i++) {
        Conn conn = open(selector);
        if (interval > 0) {
          conn.dueAt = start + i * interval / connections;
          paced.add(conn);
        } else {
          send(conn);
        }
      }
      while (generator.running()) {
        if (interval > 0) {
          sendWhatIsDue(selector, paced);
        } else {
          selector.select(100);
        }
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
            tally.response(conn.phase, status, end - conn.timedFrom);
            generator.countSecond(end);
            conn.inFlight = false;
            if (interval == 0 && generator.running()) {
              send(conn);
            }
          } catch (IOException e) {
            LOG.debug("connection failed", e);
            tally.response(conn.phase, -1, System.nanoTime() - conn.timedFrom);
            key.cancel();
            conn.channel.close();
            if (generator.running()) {
              Conn replacement = open(selector);
              if (interval > 0) {
                replacement.dueAt = conn.dueAt;
                paced.set(paced.indexOf(conn), replacement);
              } else {
                send(replacement);
              }
            }
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      generator.failed(e);
    } finally {
      tally.finish();
    }
  }

  private Conn open(Selector selector) throws IOException {
    SocketChannel channel = SocketChannel.open(new InetSocketAddress("localhost", port));
    channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
    channel.configureBlocking(false);
    Conn conn = new Conn(channel);
    channel.register(selector, SelectionKey.OP_READ, conn);
    return conn;
  }

  /**
   * Writes every due request whose connection is free, then waits for responses until the next one
   * is due: in the selector when that is milliseconds away, parked in short steps when it is
   * closer, since the selector's timeout only counts whole milliseconds.
   */
  private void sendWhatIsDue(Selector selector, List<Conn> paced) throws IOException {
    long now = System.nanoTime();
    long next = now + 100_000_000L;
    for (Conn conn : paced) {
      if (!conn.inFlight && conn.dueAt <= now) {
        send(conn);
        conn.timedFrom = conn.dueAt;
        conn.phase = generator.phaseAt(conn.dueAt);
        conn.dueAt += interval;
      }
      if (!conn.inFlight) {
        next = Math.min(next, conn.dueAt);
      }
    }
    long wait = next - System.nanoTime();
    if (wait >= 2_000_000L) {
      selector.select(wait / 1_000_000L - 1);
    } else if (selector.selectNow() == 0 && wait > 0) {
      LockSupport.parkNanos(Math.min(wait, 50_000L));
    }
  }

  private void send(Conn conn) throws IOException {
    int p = generator.currentPhase();
    tally.enter(p);
    conn.phase = p;
    conn.inFlight = true;
    ByteBuffer request = requests[workload.next(random)].duplicate();
    conn.timedFrom = System.nanoTime();
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
        if (b[i] == '0'
            && b[i + 1] == '\r'
            && b[i + 2] == '\n'
            && b[i + 3] == '\r'
            && b[i + 4] == '\n'
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
      throw new IOException(
          "more bytes than one response: the server answered without being asked");
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
