package io.tally.launcher;

import io.tally.redirect.RedirectWebConfig;
import io.tally.redirect.RedirectWebServer;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;

/**
 * redirect-web in a JVM of its own under {@code ./tally up} ({@link RedirectWebProcess}), as it
 * runs in production: its heap and its pauses are its own, not the broker's and the MiniCluster's.
 * It reads its settings from the environment as {@link RedirectWebServer#main} does, prints {@value
 * #READY} and its port once the click topic is known, and exits when its standard input closes: the
 * launcher holds the other end, so a launcher killed with SIGKILL takes it along.
 */
public final class ChildRedirectWeb {

  /** The line, followed by the HTTP port, that says the server answers and counts. */
  static final String READY = "redirect-web ready on port ";

  private ChildRedirectWeb() {}

  public static void main(String[] args) throws IOException {
    RedirectWebServer server;
    try {
      server = RedirectWebServer.start(RedirectWebConfig.fromEnv(System.getenv()));
    } catch (RuntimeException e) {
      // The launcher shows this and stops: a thread the failed start left would keep the JVM up.
      e.printStackTrace();
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(server::close, "redirect-web-shutdown"));
    server.awaitClickTopic(Duration.ofSeconds(30));
    System.out.println(READY + server.port());
    System.out.flush();
    InputStream launcher = System.in;
    while (launcher.read() != -1) {
      // Nothing is sent: the stream only ends, when the launcher has gone.
    }
    System.exit(0);
  }
}
