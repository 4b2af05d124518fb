package io.tally.bench.support;

import com.sun.management.OperatingSystemMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where CPU time went between two snapshots, in cores (CPU seconds per wall second): the whole
 * machine (from {@code /proc/stat}), this JVM split by thread role, and PostgreSQL's processes.
 *
 * <p>Everything but PostgreSQL runs in the benchmark's JVM, so the JVM's threads are told apart by
 * name: the load generator's, the HTTP server's (where each redirect, its counting included, runs),
 * the Kafka producer's I/O thread, the in-process Kafka broker's, and the rest ("other": GC and
 * JIT, which {@link ThreadMXBean} cannot see, as the JVM's CPU time minus the named threads').
 */
public final class CpuMeter {

  /** The role of a JVM thread, by its name. */
  public enum Role {
    CLIENT("load generator"),
    HTTP("HTTP server"),
    PRODUCER("producer I/O"),
    BROKER("Kafka broker"),
    OTHER("GC, JIT, other");

    public final String label;

    Role(String label) {
      this.label = label;
    }

    static Role of(String threadName) {
      if (threadName.startsWith(LOAD_THREAD_PREFIX)) {
        return CLIENT;
      }
      if (threadName.startsWith("JettyServerThreadPool") || threadName.startsWith("qtp")) {
        return HTTP;
      }
      if (threadName.startsWith("kafka-producer-network-thread")) {
        return PRODUCER;
      }
      for (String prefix : BROKER_THREAD_PREFIXES) {
        if (threadName.startsWith(prefix)) {
          return BROKER;
        }
      }
      return OTHER;
    }
  }

  /** How the embedded KRaft broker (and its controller) name their threads. */
  private static final List<String> BROKER_THREAD_PREFIXES =
      List.of(
          "data-plane-kafka",
          "kafka-",
          "broker-",
          "controller-",
          "ExpirationReaper",
          "ReplicaFetcher",
          "group-coordinator",
          "share-coordinator",
          "transaction-",
          "LogDirFailureHandler",
          "raft-",
          "quorum-",
          "PersisterStateManager",
          "AddPartitionsToTxnSenderThread",
          "TxnMarkerSenderThread",
          "metadata-",
          "event-process-thread");

  /** Load generator threads carry this prefix so that their CPU is told apart from the server's. */
  public static final String LOAD_THREAD_PREFIX = "bench-load-";

  private static final long CLOCK_TICKS_PER_SECOND = 100;

  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private final OperatingSystemMXBean os =
      (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private final long postmasterPid;

  /**
   * @param postmasterPid PostgreSQL's postmaster, whose children are its backends; 0 when none
   */
  public CpuMeter(long postmasterPid) {
    this.postmasterPid = postmasterPid;
  }

  /** CPU counters at one instant. */
  public record Snapshot(
      long nanos,
      long[] machineTicks,
      long jvmNanos,
      Map<Long, Long> threadNanos,
      Map<Long, Role> threadRoles,
      long postgresNanos) {}

  /** CPU use between two snapshots, in cores. */
  public record Usage(
      double seconds,
      double machineBusy,
      double machineIowait,
      double jvm,
      Map<Role, Double> jvmByRole,
      double postgres) {
    public double role(Role role) {
      return jvmByRole.getOrDefault(role, 0.0);
    }
  }

  public Snapshot snapshot() {
    Map<Long, Long> cpu = new HashMap<>();
    Map<Long, Role> roles = new HashMap<>();
    long[] ids = threads.getAllThreadIds();
    ThreadInfo[] infos = threads.getThreadInfo(ids);
    for (int i = 0; i < ids.length; i++) {
      long t = threads.getThreadCpuTime(ids[i]);
      if (t >= 0 && infos[i] != null) {
        cpu.put(ids[i], t);
        roles.put(ids[i], Role.of(infos[i].getThreadName()));
      }
    }
    return new Snapshot(
        System.nanoTime(), machineTicks(), os.getProcessCpuTime(), cpu, roles, postgresNanos());
  }

  public Usage between(Snapshot a, Snapshot b) {
    double seconds = (b.nanos() - a.nanos()) / 1e9;
    long[] d = new long[Math.min(a.machineTicks().length, b.machineTicks().length)];
    for (int i = 0; i < d.length; i++) {
      d[i] = b.machineTicks()[i] - a.machineTicks()[i];
    }
    // /proc/stat cpu: user nice system idle iowait irq softirq steal
    double busyTicks = d.length >= 8 ? d[0] + d[1] + d[2] + d[5] + d[6] + d[7] : Double.NaN;
    double iowaitTicks = d.length >= 5 ? d[4] : Double.NaN;
    Map<Role, Double> byRole = new EnumMap<>(Role.class);
    double named = 0;
    for (Map.Entry<Long, Long> e : b.threadNanos().entrySet()) {
      Role role = b.threadRoles().get(e.getKey());
      if (role == Role.OTHER) {
        continue;
      }
      long before = a.threadNanos().getOrDefault(e.getKey(), 0L);
      double cores = (e.getValue() - before) / 1e9 / seconds;
      byRole.merge(role, cores, Double::sum);
      named += cores;
    }
    double jvm = (b.jvmNanos() - a.jvmNanos()) / 1e9 / seconds;
    byRole.put(Role.OTHER, Math.max(0, jvm - named));
    // A PostgreSQL process that exited between the snapshots takes its CPU time with it: never
    // below 0.
    double postgres = Math.max(0, (b.postgresNanos() - a.postgresNanos()) / 1e9 / seconds);
    return new Usage(
        seconds,
        busyTicks / CLOCK_TICKS_PER_SECOND / seconds,
        iowaitTicks / CLOCK_TICKS_PER_SECOND / seconds,
        jvm,
        byRole,
        postgres);
  }

  private static long[] machineTicks() {
    try {
      String line = Files.readAllLines(Path.of("/proc/stat")).get(0);
      String[] parts = line.trim().split("\\s+");
      long[] ticks = new long[parts.length - 1];
      for (int i = 1; i < parts.length; i++) {
        ticks[i - 1] = Long.parseLong(parts[i]);
      }
      return ticks;
    } catch (IOException | RuntimeException e) {
      return new long[0];
    }
  }

  private long postgresNanos() {
    if (postmasterPid <= 0) {
      return 0;
    }
    Optional<ProcessHandle> postmaster = ProcessHandle.of(postmasterPid);
    if (postmaster.isEmpty()) {
      return 0;
    }
    long total = cpu(postmaster.get());
    for (ProcessHandle child : (Iterable<ProcessHandle>) postmaster.get().children()::iterator) {
      total += cpu(child);
    }
    return total;
  }

  /** The CPU time a process has used, in nanoseconds; 0 for one that has ended. */
  public static long cpu(ProcessHandle process) {
    return process.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
  }
}
