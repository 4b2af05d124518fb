package io.tally.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A real Redis (Debian's {@code redis-server}) started for a test on a free port, in memory only.
 * It can be paused (SIGSTOP: the port stays open and nothing answers, as a hung server) and
 * resumed. Closing stops it.
 */
public final class RedisServer implements AutoCloseable {

  public static final String INSTALL = "apt-get install -y --no-install-recommends redis-server";

  private final Process process;
  private final int port;

  private RedisServer(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /** Starts Redis with its log in {@code dir}; fails naming the install command when missing. */
  public static RedisServer start(Path dir) throws Exception {
    Path binary = Path.of("/usr/bin/redis-server");
    if (!Files.isExecutable(binary)) {
      throw new AssertionError("this test needs Redis, which is not installed: " + INSTALL);
    }
    Files.createDirectories(dir);
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Path log = dir.resolve("redis.log");
    Process process =
        new ProcessBuilder(
                List.of(
                    binary.toString(),
                    "--port",
                    String.valueOf(port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    dir.toString()))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    RedisServer server = new RedisServer(process, port);
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new AssertionError("redis-server exited: " + Files.readString(log));
      }
      if (server.pings()) {
        return server;
      }
      Thread.sleep(100);
    }
    server.close();
    throw new AssertionError("Redis not ready within 20 s: " + Files.readString(log));
  }

  /** {@code redis://127.0.0.1:PORT}. */
  public String url() {
    return "redis://127.0.0.1:" + port;
  }

  /** Whether Redis answers PING within a second. */
  public boolean pings() {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      socket.setSoTimeout(1000);
      OutputStream out = socket.getOutputStream();
      out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] reply = in.readNBytes(7);
      return new String(reply, StandardCharsets.US_ASCII).equals("+PONG\r\n");
    } catch (IOException e) {
      return false;
    }
  }

  /** Stops the process in place: connections stay open and nothing answers. */
  public void pause() throws Exception {
    signal("STOP");
  }

  public void resume() throws Exception {
    signal("CONT");
  }

  private void signal(String name) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).start();
    if (kill.waitFor() != 0) {
      throw new IllegalStateException("kill -" + name + " failed");
    }
  }

  @Override
  public void close() {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    if (process.isAlive()) {
      try {
        signal("CONT");
      } catch (Exception ignored) {
        // Stopping it anyway.
      }
    }
    process.destroy();
    try {
      process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
