package io.tally.local.flink;

import io.tally.local.RestEndpoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.api.common.JobID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Flink's CLI front end ({@code flink run}) in a JVM of its own, as a user would run it: the job
 * jar's {@code main} builds the job there and submits it over the REST API. The launcher's JVM
 * never hosts a job.
 */
public final class FlinkCli {

  private static final Logger LOG = LoggerFactory.getLogger(FlinkCli.class);
  private static final Pattern SUBMITTED =
      Pattern.compile("Job has been submitted with JobID ([0-9a-f]{32})");
  private static final String CLI_MAIN = "org.apache.flink.client.cli.CliFrontend";

  private final FlinkInstall install;
  private final RestEndpoint endpoint;
  private final Path workDir;

  /**
   * @param workDir where the CLI's config folder and log file go ({@code TALLY_HOME/flink/cli})
   */
  public FlinkCli(FlinkInstall install, RestEndpoint endpoint, Path workDir) {
    this.install = install;
    this.endpoint = endpoint;
    this.workDir = workDir;
  }

  /**
   * What to submit: a job jar, its flags, where to restore it from, and whether that restore may
   * drop state of operators the job no longer has (the CLI's {@code --allowNonRestoredState}).
   */
  public record Submission(
      Path jar,
      List<String> jobArgs,
      Optional<String> restoreFrom,
      boolean allowNonRestoredState) {}

  /** {@code flink run -d}: submits the job and returns its id once the cluster has accepted it. */
  public JobID runDetached(Submission submission) {
    Path output = workDir.resolve("flink-run.out");
    long starting = System.nanoTime();
    int exit = run(submission, true, ProcessBuilder.Redirect.to(output.toFile()), output);
    String printed = read(output);
    Matcher submitted = SUBMITTED.matcher(printed);
    if (exit != 0 || !submitted.find()) {
      throw new IllegalStateException(
          "flink run failed (exit "
              + exit
              + "): "
              + failure(printed)
              + "; the CLI's output is in "
              + output);
    }
    LOG.info(
        "flink run -d {} submitted job {} in {} ms",
        submission.jar().getFileName(),
        submitted.group(1),
        (System.nanoTime() - starting) / 1_000_000);
    return JobID.fromHexString(submitted.group(1));
  }

  /**
   * {@code flink run} attached: waits for the job to finish, its output on this console and the
   * CLI's errors in a file; returns the CLI's exit status.
   */
  public int runAttached(Submission submission) {
    return run(submission, false, ProcessBuilder.Redirect.INHERIT, attachedErrors());
  }

  /**
   * Why the last attached run failed, in one line, and where the whole of what the CLI printed is.
   */
  public String attachedFailure() {
    return failure(read(attachedErrors())) + "; the CLI's output is in " + attachedErrors();
  }

  private Path attachedErrors() {
    return workDir.resolve("flink-run.err");
  }

  /**
   * A job's flags as the CLI's command line shows them, and the secrets among them moved to the
   * CLI's environment, where the job's options read them too: anyone on the machine can read a
   * process's command line ({@code ps}), not its environment.
   */
  record JobArgs(List<String> args, Map<String, String> environment) {

    /** The flags that hold secrets, and the variables the job reads them from instead. */
    private static final Map<String, String> SECRETS =
        Map.of(
            "--jdbc-password", "TALLY_PG_PASSWORD",
            "--kafka-sasl-password", "TALLY_KAFKA_SASL_PASSWORD",
            "--kafka-truststore-password", "TALLY_KAFKA_TRUSTSTORE_PASSWORD");

    static JobArgs withoutSecrets(List<String> jobArgs) {
      List<String> args = new ArrayList<>();
      Map<String, String> environment = new HashMap<>();
      for (int i = 0; i < jobArgs.size(); i++) {
        String arg = jobArgs.get(i);
        int equals = arg.indexOf('=');
        String flag = equals < 0 ? arg : arg.substring(0, equals);
        String variable = SECRETS.get(flag);
        if (variable == null) {
          args.add(arg);
        } else if (equals >= 0) {
          environment.put(variable, arg.substring(equals + 1));
        } else if (i + 1 < jobArgs.size()) {
          environment.put(variable, jobArgs.get(++i));
        }
      }
      return new JobArgs(args, environment);
    }
  }

  private int run(
      Submission submission, boolean detached, ProcessBuilder.Redirect stdout, Path stderr) {
    Path confDir = FlinkConf.writeClient(workDir.resolve("conf"), endpoint.host(), endpoint.port());
    List<String> args = new ArrayList<>(List.of("run"));
    if (detached) {
      args.add("-d");
    }
    submission
        .restoreFrom()
        .ifPresent(
            path -> {
              args.addAll(List.of("--fromSavepoint", path));
              if (submission.allowNonRestoredState()) {
                args.add("--allowNonRestoredState");
              }
            });
    args.add(submission.jar().toString());
    JobArgs job = JobArgs.withoutSecrets(submission.jobArgs());
    args.addAll(job.args());
    ProcessBuilder builder =
        new ProcessBuilder(
            FlinkJvm.command(
                install,
                confDir,
                workDir.resolve("flink-cli.log"),
                List.of("-Xmx512m"),
                CLI_MAIN,
                args));
    builder.environment().put("FLINK_CONF_DIR", confDir.toString());
    builder.environment().putAll(job.environment());
    builder.redirectOutput(stdout);
    if (stdout == ProcessBuilder.Redirect.INHERIT) {
      builder.redirectError(stderr.toFile());
    } else {
      builder.redirectErrorStream(true);
    }
    Process cli;
    try {
      cli = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start Flink's CLI", e);
    }
    try {
      return cli.waitFor();
    } catch (InterruptedException e) {
      // An attached run waits as long as its job; whoever gives up on it should not leave the CLI
      // behind.
      cli.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while flink run was running", e);
    }
  }

  /** The innermost cause the CLI printed, which names what went wrong. */
  static String failure(String printed) {
    String last = null;
    for (String line : printed.lines().toList()) {
      String trimmed = line.trim();
      if (trimmed.startsWith("Caused by: ")) {
        last = trimmed.substring("Caused by: ".length());
      } else if (last == null
          && trimmed.startsWith("org.apache.flink.")
          && trimmed.contains("Exception: ")) {
        last = trimmed;
      }
    }
    return last == null ? "no job id in its output" : last;
  }

  private static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file) : "";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
