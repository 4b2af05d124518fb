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
 * #READY} and its port once it answers and has asked for the click topic's partitions (for up to 30
 * s), and exits when its standard input closes: the launcher holds the other end, so a launcher
 * killed with SIGKILL takes it along, also while it starts.
 */
public final class ChildRedirectWeb {

  /** The line, followed by the HTTP port, that says the server answers. */
  static final String READY = "redirect-web ready on port ";

  private ChildRedirectWeb() {}

  public static void main(String[] args) {
    Thread launcherWatch = new Thread(ChildRedirectWeb::exitWhenLauncherGoes, "launcher-watch");
    launcherWatch.setDaemon(true);
    launcherWatch.start();
    try {
      RedirectWebServer server =
          RedirectWebServer.start(RedirectWebConfig.fromEnv(System.getenv()));
      Runtime.getRuntime().addShutdownHook(new Thread(server::close, "redirect-web-shutdown"));
      server.awaitClickTopic(Duration.ofSeconds(30));
      System.out.println(READY + server.port());
      System.out.flush();
    } catch (Throwable e) {
      // The launcher shows this and stops: a thread the failed start left would keep the JVM up.
      e.printStackTrace();
      System.exit(1);
    }
  }

  private static void exitWhenLauncherGoes() {
    InputStream launcher = System.in;
    try {
      while (launcher.read() != -1) {
        // Nothing is sent: the stream only ends, when the launcher has gone.
      }
    } catch (IOException e) {
      // Read as the launcher's end.
    }
    System.exit(0);
  }
}
