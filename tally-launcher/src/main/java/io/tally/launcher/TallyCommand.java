package io.tally.launcher;

import io.tally.embedded.EmbeddedPostgresServer;
import io.tally.embedded.Ports;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** The {@code ./tally} command: runs the local stack and reads its counts. */
@Command(
    name = "tally",
    mixinStandardHelpOptions = true,
    description = "Tally: click counting off the redirect path, on one machine.",
    subcommands = {TallyCommand.Up.class, TallyCommand.Counts.class, CommandLine.HelpCommand.class},
    footer = {
      "",
      "Environment:",
      "  TALLY_HOME           data folder (default ./.tally)",
      "  TALLY_HTTP_PORT      redirect-web port (default 8080)",
      "  TALLY_FLINK_UI_PORT  Flink web UI port (default 8081)",
      "  TALLY_KAFKA_PORT     Kafka broker port (default 9092)",
      "  TALLY_PG_PORT        embedded PostgreSQL port (default 5432)",
      "  TALLY_PG_URL         use this PostgreSQL (JDBC URL) instead of the embedded one",
      "  TALLY_PG_USER, TALLY_PG_PASSWORD  credentials for TALLY_PG_URL",
      "  TALLY_API_KEY        API key for the links API (made and kept in TALLY_HOME when unset)"
    })
public final class TallyCommand {

  public static void main(String[] args) {
    CommandLine cli = new CommandLine(new TallyCommand());
    cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
      commandLine.getErr().println("tally: " + rootMessage(e));
      return e instanceof Ports.PortInUseException ? 3 : 1;
    });
    int exit = cli.execute(args);
    if (exit != 0 || args.length == 0 || !args[0].equals("up")) {
      System.exit(exit);
    }
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && !(t instanceof Ports.PortInUseException)) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }

  /** {@code ./tally up}: starts everything and runs until Ctrl-C. */
  @Command(name = "up", description = "Start Kafka, PostgreSQL, the Flink click job and redirect-web; Ctrl-C stops them.")
  static final class Up implements Callable<Integer> {
    @Override
    public Integer call() throws Exception {
      PrintStream out = System.out;
      StackSettings settings = StackSettings.fromEnv(System.getenv());
      out.println("Starting Tally in " + settings.home() + " ...");
      LocalStack stack = LocalStack.start(settings);
      CountDownLatch stopped = new CountDownLatch(1);
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        System.out.println("Stopping Tally ...");
        stack.close();
        System.out.println("Stopped.");
        stopped.countDown();
      }, "tally-shutdown"));
      out.println("Tally is up.");
      out.printf("  redirect-web  %s   (API key: %s)%n", stack.redirectUrl(), stack.apiKey());
      out.printf("  Flink web UI  %s   (job %s, %s)%n", stack.flinkUiUrl(), stack.clickJob().getJobID(),
          stack.resumedFrom().map(p -> "resumed from " + p).orElse("fresh start"));
      out.printf("  Kafka         %s   (topics %s, %s)%n", stack.kafkaBootstrap(), ClickTopics.CLICKS, ClickTopics.DEAD_LETTERS);
      out.printf("  PostgreSQL    %s%n", stack.psqlUrl());
      out.printf("  data          %s%n", settings.home());
      out.println("Try: curl -s -X POST " + stack.redirectUrl() + "/api/links -H 'Authorization: Bearer "
          + stack.apiKey() + "' -d '{\"url\":\"https://example.com\"}'");
      out.println("Press Ctrl-C to stop.");
      stopped.await();
      return 0;
    }
  }

  /** {@code ./tally counts CODE}: one link's per-minute counts. */
  @Command(name = "counts", description = "Print a link's clicks per minute (minute, human clicks, bot clicks) and the total.")
  static final class Counts implements Callable<Integer> {
    @Parameters(paramLabel = "CODE", description = "the link code")
    String code;

    @Override
    public Integer call() throws Exception {
      StackSettings settings = StackSettings.fromEnv(System.getenv());
      String url = settings.externalPgUrl().orElse("jdbc:postgresql://localhost:" + settings.pgPort() + "/postgres");
      try (Connection c = DriverManager.getConnection(url, settings.pgUser(), settings.pgPassword())) {
        CountsReport.print(c, code, System.out);
        return 0;
      } catch (SQLException notRunning) {
        if (settings.externalPgUrl().isPresent() || !java.nio.file.Files.isDirectory(settings.pgData())) {
          throw new IllegalStateException("cannot reach PostgreSQL at " + url + ": " + notRunning.getMessage());
        }
      }
      // The stack is down: open its database briefly to read the counts it kept.
      try (EmbeddedPostgresServer pg =
              EmbeddedPostgresServer.start(settings.pgData(), 0, EmbeddedPostgresServer.Durability.FAST);
          Connection c = DriverManager.getConnection(pg.jdbcUrl(), settings.pgUser(), settings.pgPassword())) {
        CountsReport.print(c, code, System.out);
        return 0;
      }
    }
  }
}
