package io.tally.bench.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link CpuMeter}: CPU time is charged to the role whose thread spent it, and only to
 * it.
 */
class CpuMeterTest {

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  private static final long SPIN_NANOS = TimeUnit.MILLISECONDS.toNanos(300);

  @Test
  void threadRolesFollowTheirNames() {
    assertThat(CpuMeter.Role.of(CpuMeter.LOAD_THREAD_PREFIX + "nio"))
        .isEqualTo(CpuMeter.Role.CLIENT);
    assertThat(CpuMeter.Role.of("qtp1234-56")).isEqualTo(CpuMeter.Role.HTTP);
    assertThat(CpuMeter.Role.of("JettyServerThreadPool-12")).isEqualTo(CpuMeter.Role.HTTP);
    // The producer's thread starts with "kafka-" like the broker's, and is not the broker's.
    assertThat(CpuMeter.Role.of("kafka-producer-network-thread | producer-1"))
        .isEqualTo(CpuMeter.Role.PRODUCER);
    assertThat(CpuMeter.Role.of("data-plane-kafka-request-handler-0"))
        .isEqualTo(CpuMeter.Role.BROKER);
    assertThat(CpuMeter.Role.of("kafka-log-cleaner-thread-0")).isEqualTo(CpuMeter.Role.BROKER);
    assertThat(CpuMeter.Role.of("main")).isEqualTo(CpuMeter.Role.OTHER);
  }

  @Test
  void aSpinningThreadsCpuGoesToItsRoleAndASleepingThreadsToNone() throws Exception {
    CpuMeter meter = new CpuMeter(0);
    CountDownLatch stop = new CountDownLatch(1);
    Thread sleeper = new Thread(() -> await(stop), "qtp-sleeper");
    sleeper.start();
    // Kept alive past the second snapshot: a thread that has ended takes its CPU time with it.
    Thread spinner =
        new Thread(
            () -> {
              spinFor(SPIN_NANOS);
              await(stop);
            },
            CpuMeter.LOAD_THREAD_PREFIX + "spinner");
    try {
      CpuMeter.Snapshot before = meter.snapshot();
      spinner.start();
      awaitCpu(spinner, SPIN_NANOS);
      CpuMeter.Snapshot after = meter.snapshot();
      CpuMeter.Usage usage = meter.between(before, after);

      double spentSeconds = SPIN_NANOS / 1e9;
      assertThat(usage.role(CpuMeter.Role.CLIENT) * usage.seconds())
          .isBetween(spentSeconds * 0.95, spentSeconds * 1.2);
      assertThat(usage.role(CpuMeter.Role.HTTP) * usage.seconds()).isLessThan(0.005);
      // The whole JVM spent at least the spin, and the machine (read from /proc/stat, not from the
      // JVM) too.
      assertThat(usage.jvm() * usage.seconds()).isGreaterThanOrEqualTo(spentSeconds * 0.95);
      assertThat(usage.machineBusy() * usage.seconds()).isGreaterThanOrEqualTo(spentSeconds * 0.9);
      assertThat(usage.postgres()).isZero();
    } finally {
      stop.countDown();
      spinner.join();
      sleeper.join();
    }
  }

  @Test
  void cpuOfUnnamedThreadsIsOther() throws Exception {
    CpuMeter meter = new CpuMeter(0);
    CpuMeter.Snapshot before = meter.snapshot();
    Thread spinner = new Thread(() -> spinFor(SPIN_NANOS), "some-worker");
    spinner.start();
    awaitCpu(spinner, SPIN_NANOS);
    CpuMeter.Usage usage = meter.between(before, meter.snapshot());
    spinner.join();

    double spentSeconds = SPIN_NANOS / 1e9;
    assertThat(usage.role(CpuMeter.Role.OTHER) * usage.seconds())
        .isGreaterThanOrEqualTo(spentSeconds * 0.95);
    assertThat(usage.role(CpuMeter.Role.CLIENT)).isZero();
  }

  @Test
  void postgresIsTheCpuOfThePostmasterAndItsChildren() throws Exception {
    // A stand-in postmaster: a shell whose child burns CPU, as a backend does.
    Process postmaster =
        new ProcessBuilder(
                "sh", "-c", "sh -c 'i=0; while [ $i -lt 50000000 ]; do i=$((i+1)); done'; sleep 30")
            .start();
    try {
      CpuMeter meter = new CpuMeter(postmaster.pid());
      CpuMeter.Snapshot before = meter.snapshot();
      ProcessHandle child = awaitChild(postmaster.toHandle());
      long childCpu = 0;
      while (child.isAlive()) {
        childCpu = child.info().totalCpuDuration().map(d -> d.toNanos()).orElse(0L);
        if (childCpu >= TimeUnit.MILLISECONDS.toNanos(200)) {
          break;
        }
        Thread.sleep(10);
      }
      CpuMeter.Usage usage = meter.between(before, meter.snapshot());
      assertThat(childCpu).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
      // Whatever the child had spent before the first snapshot is not in the usage.
      double spentBetween = (childCpu - before.postgresNanos()) / 1e9;
      assertThat(usage.postgres() * usage.seconds()).isGreaterThanOrEqualTo(spentBetween * 0.95);
      assertThat(usage.role(CpuMeter.Role.CLIENT)).isZero();
    } finally {
      postmaster.descendants().forEach(ProcessHandle::destroy);
      postmaster.destroy();
      postmaster.waitFor();
    }
  }

  /** Spins until this thread has spent {@code nanos} of CPU. */
  private static void spinFor(long nanos) {
    long start = THREADS.getCurrentThreadCpuTime();
    long spent;
    long sink = 0;
    do {
      for (int i = 0; i < 10_000; i++) {
        sink += i ^ sink;
      }
      spent = THREADS.getCurrentThreadCpuTime() - start;
    } while (spent < nanos || sink == 42);
  }

  /** Waits until {@code thread} has spent {@code nanos} of CPU, or has ended. */
  private static void awaitCpu(Thread thread, long nanos) throws InterruptedException {
    while (THREADS.getThreadCpuTime(thread.getId()) < nanos && thread.isAlive()) {
      Thread.sleep(5);
    }
  }

  private static ProcessHandle awaitChild(ProcessHandle parent) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      var child = parent.children().findFirst();
      if (child.isPresent()) {
        return child.get();
      }
      Thread.sleep(5);
    }
    throw new AssertionError("the stand-in postmaster started no child");
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
