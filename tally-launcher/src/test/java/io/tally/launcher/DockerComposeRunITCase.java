package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.clickjob.ClickJobOptions;
import io.tally.embedded.EmbeddedKafkaBroker;
import io.tally.embedded.EmbeddedPostgresServer;
import io.tally.embedded.Ports;
import io.tally.local.ClickTopics;
import io.tally.local.LocalClickJob;
import io.tally.testing.ContainerProcesses;
import io.tally.testing.PasswordCheckedPostgres;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docker-compose.yml's own services run as compose would run them, without Docker: each service's
 * command with that service's environment, its variables filled from a {@code .env} as a user
 * writes it, against real processes of this machine: PostgreSQL that checks passwords, initialised
 * by the file the postgres service mounts into its init folder, and a Kafka broker. The only things
 * changed are what a container network changes: service host names become this machine's ports,
 * mounted paths the repository's files, and the HTTP ports free ones. The schema service migrates,
 * redirect-web starts as its login and takes a link and its clicks, and the click job submitted
 * with the flags of click-job-submit counts them as its own login. A wrong login, variable, port or
 * command in the file fails here.
 */
class DockerComposeRunITCase {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  /** The {@code .env} a user writes (README): every variable the file requires. */
  private static final Map<String, String> DOT_ENV =
      Map.of(
          "POSTGRES_PASSWORD", "owner-pw-0123456789",
          "TALLY_WEB_DB_PASSWORD", "web-pw-0123456789",
          "TALLY_JOB_DB_PASSWORD", "job-pw-0123456789",
          "TALLY_RECONCILE_DB_PASSWORD", "reconcile-pw-0123456789",
          "TALLY_API_KEYS", "write:" + "k".repeat(40),
          "TALLY_IP_HASH_SECRET", "s".repeat(44),
          "GRAFANA_ADMIN_PASSWORD", "grafana-pw");

  @TempDir Path dir;

  @Test
  void theSchemaRedirectWebAndTheClickJobRunAsComposeStartsThem() throws Exception {
    JsonNode services = DockerComposeTest.compose().get("services");
    try (EmbeddedPostgresServer postgres =
            EmbeddedPostgresServer.start(
                dir.resolve("pg"), 0, EmbeddedPostgresServer.Durability.FAST);
        EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0)) {
      String ownerPassword = DOT_ENV.get("POSTGRES_PASSWORD");
      PasswordCheckedPostgres.require(postgres, ownerPassword);
      ContainerProcesses processes = new ContainerProcesses(dir);
      Map<String, String> hosts =
          Map.of(
              "postgres:5432",
              "localhost:" + postgres.port(),
              "kafka:19092",
              kafka.bootstrapServers());
      // kafka-init's topics, as ClickTopics makes them (DockerComposeTest holds the two alike).
      kafka.createTopics(ClickTopics.all());

      // The postgres image runs its init folder's scripts with the service's environment.
      JsonNode pg = services.get("postgres");
      Map<String, String> pgEnv = environment(pg, hosts);
      pgEnv.put("PGHOST", "localhost");
      pgEnv.put("PGPORT", String.valueOf(postgres.port()));
      pgEnv.put("PGPASSWORD", pgEnv.get("POSTGRES_PASSWORD"));
      assertThat(
              processes.run(
                  "postgres init",
                  List.of("sh", mounted(pg, "/docker-entrypoint-initdb.d/10-tally-logins.sh")),
                  pgEnv,
                  120))
          .isZero();

      JsonNode schema = services.get("schema");
      assertThat(processes.run("schema", command(schema, hosts), environment(schema, hosts), 120))
          .as("the schema service migrates as the owner")
          .isZero();

      JsonNode web = services.get("redirect-web");
      Map<String, String> webEnv = environment(web, hosts);
      int httpPort = Ports.ephemeral();
      webEnv.put("TALLY_HTTP_PORT", String.valueOf(httpPort));
      webEnv.put("TALLY_ADMIN_PORT", String.valueOf(Ports.ephemeral()));
      webEnv.put("TALLY_PUBLIC_URL", "http://localhost:" + httpPort);
      Process redirectWeb = processes.start("redirect-web", command(web, hosts), webEnv);
      try {
        String base = "http://localhost:" + httpPort;
        String key = webEnv.get("TALLY_API_KEYS").substring("write:".length());
        await("redirect-web answers")
            .atMost(Duration.ofSeconds(60))
            .ignoreExceptions()
            .until(() -> StackProbe.status(base + "/api/openapi.json") == 200);
        String code = new LinkClient(base, key).createLink("https://example.com/compose");

        try (LocalClickJob job = startClickJob(services.get("click-job-submit"), hosts)) {
          HttpClient http = HttpClient.newHttpClient();
          for (int i = 0; i < 3; i++) {
            HttpResponse<Void> answer =
                http.send(
                    HttpRequest.newBuilder(URI.create(base + "/" + code))
                        .header(
                            "User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Firefox/128.0")
                        .build(),
                    HttpResponse.BodyHandlers.discarding());
            assertThat(answer.statusCode()).isEqualTo(302);
          }
          await("the three clicks counted by the job as its login")
              .atMost(Duration.ofSeconds(90))
              .untilAsserted(() -> assertThat(clicks(postgres, ownerPassword, code)).isEqualTo(3));
        }
      } finally {
        ContainerProcesses.stop(redirectWeb);
      }
    }
  }

  /**
   * The click job with click-job-submit's {@code flink run} flags, in a MiniCluster here; the
   * password it would read from the service's {@code TALLY_PG_PASSWORD} is given as the flag it
   * defaults.
   */
  private LocalClickJob startClickJob(JsonNode submit, Map<String, String> hosts) throws Exception {
    String script = submit.get("command").get(2).asText().replace("$$", "$");
    Matcher run =
        Pattern.compile("exec flink run -d \\$resume (\\S+) \\\\\\n((?:.*\\n?)*)").matcher(script);
    assertThat(run.find()).as("click-job-submit ends in exec flink run").isTrue();
    assertThat(mounted(submit, run.group(1))).endsWith("-job.jar");
    List<String> args = new ArrayList<>();
    for (String token : run.group(2).replace("\\\n", " ").trim().split("\\s+")) {
      args.add(hosted(token.replaceAll("^'|'$", ""), hosts));
    }
    int checkpoints = args.indexOf("--checkpoint-dir") + 1;
    args.set(checkpoints, dir.resolve("flink-data/checkpoints").toUri().toString());
    args.add("--jdbc-password");
    args.add(environment(submit, hosts).get("TALLY_PG_PASSWORD"));
    return LocalClickJob.start(
        ClickJobOptions.parse(args.toArray(String[]::new)),
        LocalClickJob.Setup.of(Ports.ephemeral(), Files.createDirectories(dir.resolve("tmp"))));
  }

  private static long clicks(EmbeddedPostgresServer postgres, String password, String code)
      throws Exception {
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl(), "postgres", password);
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT COALESCE(sum(clicks), 0) FROM click_counts WHERE code = '" + code + "'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** A service's environment with the {@code .env} filled in and the hosts mapped. */
  private static Map<String, String> environment(JsonNode service, Map<String, String> hosts) {
    Map<String, String> env = new LinkedHashMap<>();
    service
        .get("environment")
        .properties()
        .forEach(e -> env.put(e.getKey(), hosted(interpolate(e.getValue().asText()), hosts)));
    return env;
  }

  /** A service's command, its mounted files at their place in the repository. */
  private static List<String> command(JsonNode service, Map<String, String> hosts) {
    List<String> command = new ArrayList<>();
    for (JsonNode part : service.get("command")) {
      String arg = hosted(part.asText(), hosts);
      command.add(
          arg.equals("java")
              ? ProcessHandle.current().info().command().orElse("java")
              : mounted(service, arg));
    }
    return command;
  }

  /** The repository file mounted at {@code target}, or {@code target} when nothing is. */
  private static String mounted(JsonNode service, String target) {
    for (JsonNode volume : service.path("volumes")) {
      if (volume.isObject() && volume.path("target").asText().equals(target)) {
        Path source = ROOT.resolve(volume.path("source").asText()).normalize();
        assertThat(source).as("%s mounts %s", target, source).exists();
        return source.toString();
      }
    }
    return target;
  }

  private static String hosted(String value, Map<String, String> hosts) {
    String result = value;
    for (Map.Entry<String, String> host : hosts.entrySet()) {
      result = result.replace(host.getKey(), host.getValue());
    }
    return result;
  }

  /** Compose's {@code ${VAR:?message}}, {@code ${VAR:-default}} and {@code ${VAR}}. */
  static String interpolate(String value) {
    Matcher m = Pattern.compile("\\$\\{([A-Z0-9_]+)(?::([?-])([^}]*))?}").matcher(value);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String set = DOT_ENV.get(m.group(1));
      String replacement;
      if (set != null && !set.isEmpty()) {
        replacement = set;
      } else if ("?".equals(m.group(2))) {
        throw new AssertionError("compose would refuse to start: " + m.group(3));
      } else {
        replacement = m.group(3) == null ? "" : m.group(3);
      }
      m.appendReplacement(out, Matcher.quoteReplacement(replacement));
    }
    m.appendTail(out);
    return out.toString();
  }
}
