package io.tally.bench.redirect;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A local HTTP server whose answer time is known: every request is answered with a 302 after
 * exactly {@code delay} (never earlier), and {@link #stallFor} holds every answer back until a
 * given instant, as a server pausing for a garbage collection or a lock would. It counts what it
 * answered, and can hold answers indefinitely ({@link #hold}) so that a test can stop a load
 * generator with nothing in flight that the server answered and the client did not read.
 */
final class DelayedServer implements AutoCloseable {

  static {
    // The JDK server leaves Nagle's algorithm on, which with delayed ACKs holds a response back ~40
    // ms when a connection has been idle: the known delay would not be known. Read once, before the
    // first server starts.
    System.setProperty("sun.net.httpserver.nodelay", "true");
  }

  private final HttpServer server;
  private final ExecutorService handlers = Executors.newCachedThreadPool();
  private final long delayNanos;
  private final AtomicLong answered = new AtomicLong();
  private final AtomicInteger waiting = new AtomicInteger();

  /** A {@link System#nanoTime()} instant; the start, which is past, until a stall is asked for. */
  private volatile long stallUntil = System.nanoTime();

  private volatile boolean held;

  DelayedServer(long delay, TimeUnit unit) throws IOException {
    this.delayNanos = unit.toNanos(delay);
    // The address the load generator connects to ("localhost"), whichever family it resolves to
    // first.
    server = HttpServer.create(new InetSocketAddress("localhost", 0), 64);
    server.createContext("/", this::answer);
    server.setExecutor(handlers);
    server.start();
  }

  int port() {
    return server.getAddress().getPort();
  }

  /** Requests answered so far (a 302 written). */
  long answered() {
    return answered.get();
  }

  /** Requests received and not answered yet. */
  int waiting() {
    return waiting.get();
  }

  /**
   * Every request that arrives from now on, and every one waiting, is answered no earlier than
   * {@code nanos} from now.
   */
  void stallFor(long nanos) {
    stallUntil = System.nanoTime() + nanos;
  }

  /** From now on requests wait unanswered until {@link #release()}. */
  void hold() {
    held = true;
  }

  void release() {
    held = false;
  }

  private void answer(HttpExchange exchange) throws IOException {
    long received = System.nanoTime();
    waiting.incrementAndGet();
    try {
      exchange.getRequestBody().readAllBytes();
      sleepUntil(received + delayNanos);
      sleepUntil(stallUntil);
      while (held) {
        LockSupport.parkNanos(1_000_000L);
      }
      // Counted before it is sent: once the client has the answer, the count must already include
      // it.
      answered.incrementAndGet();
      waiting.decrementAndGet();
      exchange.getResponseHeaders().set("Location", "https://example.com/");
      exchange.sendResponseHeaders(302, -1);
    } finally {
      exchange.close();
    }
  }

  private static void sleepUntil(long deadline) {
    long left;
    while ((left = deadline - System.nanoTime()) > 0) {
      LockSupport.parkNanos(left);
    }
  }

  @Override
  public void close() {
    held = false;
    server.stop(0);
    handlers.shutdownNow();
  }
}
