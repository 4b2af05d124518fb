package io.tally.testing;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** The machine a benchmark or a fault run ran on, in one line for its report. */
public final class Machine {
  private Machine() {}

  public static String describe() {
    String memory = "?";
    String cpu = "?";
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          memory =
              String.format(
                  Locale.ROOT,
                  "%.1f GiB RAM",
                  Long.parseLong(line.replaceAll("\\D", "")) / 1024.0 / 1024.0);
        }
      }
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          cpu = line.substring(line.indexOf(':') + 1).trim();
          break;
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: leave the unknowns
    }
    return String.format(
        Locale.ROOT,
        "%d cores (%s), %s, Java %s, max heap %d MiB, load average %.2f",
        Runtime.getRuntime().availableProcessors(),
        cpu,
        memory,
        System.getProperty("java.version"),
        Runtime.getRuntime().maxMemory() / 1024 / 1024,
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
  }
}
