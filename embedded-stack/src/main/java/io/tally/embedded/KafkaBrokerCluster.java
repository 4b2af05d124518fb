package io.tally.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kafka cluster of several KRaft nodes on this machine, each a broker and a controller in a JVM
 * of its own (Kafka's own {@code kafka.Kafka} main on this JVM's class path), so that one can be
 * killed with SIGKILL as a crashed machine would be and started again on the same port and data.
 * Every node's folder lives under one directory and survives {@link #close()}; the cluster id is
 * kept beside them, so a later start resumes the same cluster.
 */
public final class KafkaBrokerCluster implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(KafkaBrokerCluster.class);
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

  private final Path dir;
  private final List<Node> nodes;

  /** One node: its id (from 1), client and controller ports, and its process while it runs. */
  private static final class Node {
    final int id;
    final int port;
    final int controllerPort;
    Process process;

    Node(int id, int port, int controllerPort) {
      this.id = id;
      this.port = port;
      this.controllerPort = controllerPort;
    }
  }

  /** Kills the nodes if this JVM exits without closing the cluster, as on Ctrl-C of a tool. */
  private final Thread killOnExit = new Thread(this::killAll, "kafka-cluster-exit");

  private KafkaBrokerCluster(Path dir, List<Node> nodes) {
    this.dir = dir;
    this.nodes = nodes;
    Runtime.getRuntime().addShutdownHook(killOnExit);
  }

  private void killAll() {
    nodes.stream().map(n -> n.process).filter(p -> p != null).forEach(Process::destroyForcibly);
  }

  /**
   * Starts {@code size} nodes with their data under {@code dir} on the ports from {@code firstPort}
   * up (0 picks free ones), and returns once all of them serve clients.
   *
   * @throws Ports.PortInUseException when {@code firstPort} is taken
   */
  public static KafkaBrokerCluster start(Path dir, int size, int firstPort) {
    if (size < 1) {
      throw new IllegalArgumentException("a Kafka cluster needs at least one node, not " + size);
    }
    stopOrphans(dir);
    List<Node> nodes = new ArrayList<>();
    for (int id = 1; id <= size; id++) {
      int port =
          firstPort == 0
              ? Ports.ephemeral()
              : Ports.requireFree(
                  firstPort + id - 1,
                  "Kafka node " + id,
                  "TALLY_KAFKA_PORT (node " + id + " takes the port " + (id - 1) + " after it)");
      nodes.add(new Node(id, port, Ports.ephemeral()));
    }
    KafkaBrokerCluster cluster = new KafkaBrokerCluster(dir, nodes);
    try {
      cluster.startAll();
      return cluster;
    } catch (RuntimeException | Error e) {
      cluster.close();
      throw e;
    }
  }

  private void startAll() {
    String clusterId = clusterId();
    String voters =
        nodes.stream()
            .map(n -> n.id + "@localhost:" + n.controllerPort)
            .collect(Collectors.joining(","));
    for (Node node : nodes) {
      Properties props =
          EmbeddedKafkaBroker.nodeProperties(
              node.id, node.port, node.controllerPort, voters, nodes.size(), logDir(node.id));
      EmbeddedKafkaBroker.format(logDir(node.id), props, clusterId);
    }
    nodes.forEach(this::launch);
    EmbeddedKafkaBroker.awaitBrokers(bootstrapServers(), nodes.size(), READY_TIMEOUT);
    LOG.info("Kafka cluster of {} nodes ready at {}", nodes.size(), bootstrapServers());
  }

  /** The cluster's id, made on the first start and read back on every later one. */
  private String clusterId() {
    Path file = dir.resolve("cluster-id");
    try {
      if (Files.exists(file)) {
        return Files.readString(file).trim();
      }
      Files.createDirectories(dir);
      String id = Uuid.randomUuid().toString();
      Files.writeString(file, id);
      return id;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Path logDir(int id) {
    return dir.resolve("node-" + id);
  }

  private void launch(Node node) {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.add("-Xmx512m");
    command.add("-Xss1m");
    // Kafka's logs go to the node's own file when this JVM's logging configuration names one.
    command.add("-Dlog.file=" + dir.resolve("node-" + node.id + ".log"));
    command.add("-Djava.io.tmpdir=" + dir);
    ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--add-"))
        .forEach(command::add);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add("kafka.Kafka");
    command.add(logDir(node.id).resolveSibling("node-" + node.id + ".properties").toString());
    try {
      node.process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(
                  ProcessBuilder.Redirect.appendTo(
                      dir.resolve("node-" + node.id + ".out").toFile()))
              .start();
      OrphanProcesses.record(pidFile(node.id), node.process);
      LOG.info("started Kafka node {} (pid {}) on port {}", node.id, node.process.pid(), node.port);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start Kafka node " + node.id, e);
    }
  }

  private Path pidFile(int id) {
    return dir.resolve("node-" + id + ".pid");
  }

  /**
   * Stops the nodes of a cluster kept in {@code dir} that a launcher killed with {@code kill -9}
   * left running ({@link OrphanProcesses}); they hold the ports and data folders a start needs.
   */
  public static void stopOrphans(Path dir) {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (Stream<Path> files = Files.list(dir)) {
      for (Path pidFile : files.filter(f -> f.getFileName().toString().endsWith(".pid")).toList()) {
        OrphanProcesses.stop(pidFile, dir.toString(), "Kafka " + pidFile.getFileName());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot stop the Kafka nodes of an earlier start in " + dir, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The {@code bootstrap.servers} value clients use: every node. */
  /** The running nodes' processes, to read what each spends. */
  public List<ProcessHandle> processes() {
    return nodes.stream()
        .map(n -> n.process)
        .filter(p -> p != null && p.isAlive())
        .map(Process::toHandle)
        .toList();
  }

  /** The folder holding every node's data. */
  public Path dataDir() {
    return dir;
  }

  public String bootstrapServers() {
    return nodes.stream().map(n -> "localhost:" + n.port).collect(Collectors.joining(","));
  }

  /** How many nodes the cluster has, running or not. */
  public int size() {
    return nodes.size();
  }

  /** The ids of the nodes whose process runs. */
  public List<Integer> running() {
    return nodes.stream()
        .filter(n -> n.process != null && n.process.isAlive())
        .map(n -> n.id)
        .toList();
  }

  /** Creates each topic unless it exists already. */
  public void createTopics(Collection<NewTopic> topics) {
    EmbeddedKafkaBroker.createTopics(bootstrapServers(), topics);
  }

  /** The node that leads {@code partition} of {@code topic} now. */
  public int leaderOf(String topic, int partition) {
    return describe(topic).partitions().get(partition).leader().id();
  }

  /**
   * The in-sync replicas of every partition of {@code topic}, by partition; a node that is down or
   * behind is missing from its partitions' sets.
   */
  public Map<Integer, List<Integer>> inSyncReplicas(String topic) {
    return describe(topic).partitions().stream()
        .collect(
            Collectors.toMap(
                p -> p.partition(), p -> p.isr().stream().map(n -> n.id()).sorted().toList()));
  }

  private TopicDescription describe(String topic) {
    try (Admin admin = admin()) {
      return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
    } catch (ExecutionException e) {
      throw new IllegalStateException("cannot describe topic " + topic, e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Kills node {@code id} with SIGKILL: no controlled shutdown, no leadership handed over. */
  public void kill(int id) throws InterruptedException {
    Process process = node(id).process;
    if (process != null) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      LOG.info("killed Kafka node {}", id);
    }
  }

  /**
   * Starts node {@code id} again on its port and data, and returns once every node of the cluster
   * serves clients.
   */
  public void restart(int id) {
    Node node = node(id);
    if (node.process != null && node.process.isAlive()) {
      return;
    }
    launch(node);
    awaitNodeServing(node);
  }

  /**
   * Waits until {@code node} itself answers: the others may still list it for a while after it was
   * killed, so the cluster's view alone would not tell.
   */
  private void awaitNodeServing(Node node) {
    EmbeddedKafkaBroker.awaitBrokers("localhost:" + node.port, 1, READY_TIMEOUT);
  }

  private Node node(int id) {
    return nodes.stream()
        .filter(n -> n.id == id)
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no Kafka node " + id));
  }

  private Admin admin() {
    return Admin.create(
        Map.of(
            AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrapServers(),
            AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
            5_000,
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
            15_000));
  }

  /** Stops every node with SIGTERM, Kafka's controlled shutdown, and waits for them to exit. */
  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(killOnExit);
    } catch (IllegalStateException exiting) {
      // The JVM is shutting down: the hook runs anyway.
    }
    nodes.stream()
        .map(n -> n.process)
        .filter(p -> p != null && p.isAlive())
        .forEach(Process::destroy);
    for (Node node : nodes) {
      if (node.process == null) {
        continue;
      }
      try {
        GracefulStop.awaitOrKill(
            node.process.toHandle(), "Kafka node " + node.id, Duration.ofSeconds(60));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        node.process.destroyForcibly();
      }
    }
  }

  /** The node ids, for callers that pick one. */
  public List<Integer> ids() {
    return IntStream.rangeClosed(1, nodes.size()).boxed().toList();
  }
}
