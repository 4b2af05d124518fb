package io.tally.local.flink;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of a JVM that runs a Flink entry point: Flink's jars, its opens and a log file
 * of its own.
 */
final class FlinkJvm {

  private FlinkJvm() {}

  static List<String> command(
      FlinkInstall install,
      Path confDir,
      Path logFile,
      List<String> jvmFlags,
      String mainClass,
      List<String> args) {
    List<String> command = new ArrayList<>();
    command.add(install.java());
    command.addAll(install.jvmOpens());
    command.addAll(jvmFlags);
    // The web UI shows the file named by log.file; the shipped log4j.properties appends to it.
    command.add("-Dlog.file=" + logFile.toAbsolutePath());
    command.add("-Dlog4j.configurationFile=" + confDir.resolve("log4j.properties").toUri());
    command.add("-cp");
    command.add(install.classpath());
    command.add(mainClass);
    command.addAll(args);
    return command;
  }
}
