package io.tally.embedded;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Kafka broker in KRaft mode (one node that is both broker and controller), running in this
 * JVM.
 *
 * <p>Its log directory survives {@link #stop()} and {@link #close()}, so a broker started again on
 * the same directory has every record and committed offset it had; {@link #restart()} brings it
 * back on the same port, which is what clients that lost their broker will reconnect to.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedKafkaBroker.class);

  /** The fewest iterations Kafka accepts for SCRAM-SHA-512. */
  private static final int SCRAM_ITERATIONS = 4096;

  private final Path logDir;
  private final int port;
  private final int controllerPort;
  private final int saslPort;
  private final Map<String, String> saslUsers;
  private final KeyStoreFile tlsKeyStore;
  private KafkaRaftServer server;

  private EmbeddedKafkaBroker(
      Path logDir,
      int port,
      int controllerPort,
      int saslPort,
      Map<String, String> saslUsers,
      KeyStoreFile tlsKeyStore) {
    this.logDir = logDir;
    this.port = port;
    this.controllerPort = controllerPort;
    this.saslPort = saslPort;
    this.saslUsers = Map.copyOf(saslUsers);
    this.tlsKeyStore = tlsKeyStore;
  }

  /** A PKCS12 key store holding the broker's private key and certificate, and its password. */
  public record KeyStoreFile(Path path, String password) {}

  /**
   * Formats {@code logDir} if it is new and starts the broker on {@code port} (0 picks a free one).
   *
   * @throws Ports.PortInUseException when the port is taken
   */
  public static EmbeddedKafkaBroker start(Path logDir, int port) {
    int brokerPort = Ports.requireFree(port, "Kafka", "TALLY_KAFKA_PORT");
    int controllerPort = Ports.ephemeral();
    EmbeddedKafkaBroker broker =
        new EmbeddedKafkaBroker(logDir, brokerPort, controllerPort, 0, Map.of(), null);
    broker.restart();
    return broker;
  }

  /**
   * A broker on free ports that also takes SASL/PLAIN logins on a second listener ({@link
   * #saslBootstrapServers()}) from {@code users} (name to password), as a broker that refuses
   * anonymous clients would; the first listener stays open for tools that set topics up.
   */
  public static EmbeddedKafkaBroker startWithSasl(Path logDir, Map<String, String> users) {
    EmbeddedKafkaBroker broker =
        new EmbeddedKafkaBroker(
            logDir, Ports.ephemeral(), Ports.ephemeral(), Ports.ephemeral(), users, null);
    broker.restart();
    return broker;
  }

  /**
   * A broker on free ports that also takes SCRAM-SHA-512 logins over TLS ({@code SASL_SSL}) on a
   * second listener ({@link #saslBootstrapServers()}), presenting the certificate in {@code
   * keyStore}, as a production cluster does. It authorizes by ACLs: a login may do only what an ACL
   * allows it, while the first listener's anonymous clients, the tools that set topics and ACLs up,
   * may do anything. Logins are added with {@link #addScramUser}.
   */
  public static EmbeddedKafkaBroker startWithScramOverTls(Path logDir, KeyStoreFile keyStore) {
    EmbeddedKafkaBroker broker =
        new EmbeddedKafkaBroker(
            logDir, Ports.ephemeral(), Ports.ephemeral(), Ports.ephemeral(), Map.of(), keyStore);
    broker.restart();
    return broker;
  }

  /** Adds a SCRAM-SHA-512 login, or changes its password, on a broker that takes SCRAM logins. */
  public void addScramUser(String user, String password) {
    if (tlsKeyStore == null) {
      throw new IllegalStateException("this broker takes no SCRAM logins");
    }
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()))) {
      admin
          .alterUserScramCredentials(
              List.of(
                  new UserScramCredentialUpsertion(
                      user,
                      new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS),
                      password)))
          .all()
          .get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("cannot add the SCRAM login " + user, e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while adding a SCRAM login", e);
    }
  }

  /** The SASL listener's {@code bootstrap.servers}, for a broker started with SASL. */
  public String saslBootstrapServers() {
    if (saslPort == 0) {
      throw new IllegalStateException("this broker has no SASL listener");
    }
    return "localhost:" + saslPort;
  }

  /** The {@code bootstrap.servers} value clients use. */
  public String bootstrapServers() {
    return "localhost:" + port;
  }

  public int port() {
    return port;
  }

  /** Creates each topic unless it exists already. */
  public void createTopics(Collection<NewTopic> topics) {
    createTopics(bootstrapServers(), topics);
  }

  /** Creates each topic on the brokers at {@code bootstrapServers} unless it exists already. */
  static void createTopics(String bootstrapServers, Collection<NewTopic> topics) {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
      for (NewTopic topic : topics) {
        try {
          admin.createTopics(List.of(topic)).all().get();
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof TopicExistsException)) {
            throw new IllegalStateException("cannot create topic " + topic.name(), e.getCause());
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while creating topics", e);
    }
  }

  /** Starts the broker again after {@link #stop()}, on the same port and data. */
  public synchronized void restart() {
    if (server != null) {
      return;
    }
    Properties props =
        nodeProperties(1, port, controllerPort, "1@localhost:" + controllerPort, 1, logDir);
    if (tlsKeyStore != null) {
      addScramOverTlsListener(props);
    } else if (saslPort != 0) {
      addSaslListener(props);
    }
    format(logDir, props, Uuid.randomUuid().toString());
    server = new KafkaRaftServer(KafkaConfig.fromProps(props), Time.SYSTEM);
    server.startup();
    awaitBrokers(bootstrapServers(), 1, Duration.ofSeconds(60));
    LOG.info("Kafka broker ready at {} (data in {})", bootstrapServers(), logDir);
  }

  /** Stops the broker but keeps its data; clients see it as down until {@link #restart()}. */
  public synchronized void stop() {
    if (server == null) {
      return;
    }
    server.shutdown();
    server.awaitShutdown();
    server = null;
  }

  @Override
  public void close() {
    stop();
  }

  /**
   * The settings of one combined broker and controller node of a quorum of {@code replicas} nodes
   * ({@code voters} as {@code controller.quorum.voters} takes them); the internal topics get {@code
   * replicas} copies, at most 3, and need all but one of them in sync.
   */
  static Properties nodeProperties(
      int nodeId, int port, int controllerPort, String voters, int replicas, Path logDir) {
    String copies = String.valueOf(Math.min(3, replicas));
    String inSync = String.valueOf(Math.max(1, Math.min(3, replicas) - 1));
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("node.id", String.valueOf(nodeId));
    p.put("controller.quorum.voters", voters);
    p.put(
        "listeners", "PLAINTEXT://localhost:" + port + ",CONTROLLER://localhost:" + controllerPort);
    p.put("advertised.listeners", "PLAINTEXT://localhost:" + port);
    p.put("controller.listener.names", "CONTROLLER");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.put("log.dirs", logDir.toAbsolutePath().toString());
    // Fewer partitions of the internal topics start faster; their copies follow the node count.
    p.put("offsets.topic.replication.factor", copies);
    p.put("offsets.topic.num.partitions", "4");
    p.put("transaction.state.log.replication.factor", copies);
    p.put("transaction.state.log.min.isr", inSync);
    p.put("transaction.state.log.num.partitions", "4");
    p.put("share.coordinator.state.topic.replication.factor", copies);
    p.put("share.coordinator.state.topic.min.isr", inSync);
    p.put("group.initial.rebalance.delay.ms", "0");
    // Topics are created on purpose with their partitions and retention, never by a typo.
    p.put("auto.create.topics.enable", "false");
    // A replica that lost its leader must never become leader with records missing.
    p.put("unclean.leader.election.enable", "false");
    return p;
  }

  private void addSaslListener(Properties p) {
    addSecondListener(p, "SASL_PLAINTEXT");
    p.put("sasl.enabled.mechanisms", "PLAIN");
    StringBuilder jaas =
        new StringBuilder("org.apache.kafka.common.security.plain.PlainLoginModule required");
    saslUsers.forEach(
        (user, password) ->
            jaas.append(" user_").append(user).append("=\"").append(password).append('"'));
    p.put("listener.name.sasl_plaintext.plain.sasl.jaas.config", jaas.append(';').toString());
  }

  private void addScramOverTlsListener(Properties p) {
    addSecondListener(p, "SASL_SSL");
    p.put("sasl.enabled.mechanisms", "SCRAM-SHA-512");
    p.put(
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config",
        "org.apache.kafka.common.security.scram.ScramLoginModule required;");
    p.put("listener.name.sasl_ssl.ssl.keystore.type", "PKCS12");
    p.put("listener.name.sasl_ssl.ssl.keystore.location", tlsKeyStore.path().toString());
    p.put("listener.name.sasl_ssl.ssl.keystore.password", tlsKeyStore.password());
    p.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
    // The plaintext and controller listeners carry no login: what reaches them is the broker itself
    // and the tools that set it up.
    p.put("super.users", "User:ANONYMOUS");
  }

  /** A second listener on {@code saslPort}, named after its security protocol. */
  private void addSecondListener(Properties p, String protocol) {
    String listener = protocol + "://localhost:" + saslPort;
    p.put("listeners", p.get("listeners") + "," + listener);
    p.put("advertised.listeners", p.get("advertised.listeners") + "," + listener);
    p.put(
        "listener.security.protocol.map",
        p.get("listener.security.protocol.map") + "," + protocol + ":" + protocol);
  }

  /**
   * Formats {@code logDir} for the cluster {@code clusterId} unless it is formatted already, and
   * leaves {@code props} beside it as the node's properties file, which a node in a JVM of its own
   * starts from.
   */
  static Path format(Path logDir, Properties props, String clusterId) {
    try {
      Files.createDirectories(logDir);
      Path config = logDir.resolveSibling(logDir.getFileName() + ".properties");
      try (OutputStream out = Files.newOutputStream(config)) {
        props.store(out, "embedded Kafka broker");
      }
      if (Files.exists(logDir.resolve("meta.properties"))) {
        return config;
      }
      ByteArrayOutputStream output = new ByteArrayOutputStream();
      int exit =
          StorageTool.execute(
              new String[] {"format", "-t", clusterId, "-c", config.toString()},
              new PrintStream(output, true, StandardCharsets.UTF_8));
      if (exit != 0) {
        throw new IllegalStateException("cannot format Kafka log dir " + logDir + ": " + output);
      }
      return config;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Waits until {@code count} brokers answer at {@code bootstrapServers}. */
  static void awaitBrokers(String bootstrapServers, int count, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<Throwable> failures = new ArrayList<>();
    try (Admin admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000))) {
      while (System.nanoTime() < deadline) {
        try {
          if (admin.describeCluster().nodes().get().size() >= count) {
            return;
          }
          Thread.sleep(200);
        } catch (ExecutionException e) {
          failures.add(e.getCause());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for Kafka", e);
        }
      }
    }
    IllegalStateException notReady =
        new IllegalStateException(
            count + " Kafka brokers at " + bootstrapServers + " not ready in " + timeout);
    failures.stream().reduce((a, b) -> b).ifPresent(notReady::addSuppressed);
    throw notReady;
  }
}
