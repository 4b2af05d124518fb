package io.tally.launcher;

import io.tally.clickjob.ClickCountJob;
import io.tally.local.FlinkRest;
import io.tally.local.RestEndpoint;
import io.tally.local.flink.FlinkCli;
import io.tally.local.flink.FlinkInstall;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.client.JobStatusMessage;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./tally flink ...}: the click job's life on a Flink session cluster (the local one of
 * {@code ./tally up --cluster}, or any other with {@code --rest HOST:PORT}): submit, savepoint,
 * stop, list.
 */
@Command(
    name = "flink",
    mixinStandardHelpOptions = true,
    description =
        "Run, savepoint, stop and list the click job on a Flink cluster (./tally flink --help).",
    subcommands = {
      FlinkCommand.Run.class,
      FlinkCommand.Savepoint.class,
      FlinkCommand.Stop.class,
      FlinkCommand.ListJobs.class,
      CommandLine.HelpCommand.class
    })
final class FlinkCommand {

  /** {@code --rest HOST:PORT}, shared by every subcommand. */
  static final class RestOption {
    @Option(
        names = "--rest",
        paramLabel = "HOST:PORT",
        description =
            "the Flink cluster's REST API (default: the local cluster,"
                + " localhost:TALLY_FLINK_UI_PORT)")
    String rest;

    RestEndpoint endpoint(StackSettings settings) {
      return rest == null ? RestEndpoint.local(settings.flinkUiPort()) : RestEndpoint.parse(rest);
    }

    /** The cluster's REST API, by default the one of the stack this shell runs beside. */
    FlinkRest connect() {
      return FlinkRest.connect(
          endpoint(StackSettings.beside(System.getenv(), StackSettings.RUNNING)));
    }
  }

  /** {@code --job ID} and {@code --target-dir DIR}, for the commands that take a savepoint. */
  static final class SavepointOptions {
    @Option(
        names = "--job",
        paramLabel = "ID",
        description = "the job (default: the running " + ClickCountJob.JOB_NAME + " job)")
    String job;

    @Option(
        names = "--target-dir",
        paramLabel = "DIR",
        description =
            "where the savepoint goes (default: the cluster's"
                + " execution.checkpointing.savepoint-dir)")
    String targetDir;

    JobID job(FlinkRest rest) {
      if (job == null) {
        return rest.requireActiveJob(ClickCountJob.JOB_NAME);
      }
      try {
        return JobID.fromHexString(job);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "--job takes a 32-digit hex job id (./tally flink list), not '" + job + "'");
      }
    }
  }

  /** {@code ./tally flink run}: submits the click job with Flink's CLI front end. */
  @Command(
      name = "run",
      mixinStandardHelpOptions = true,
      description = {
        "Submit the click job with Flink's CLI (flink run -d), from a savepoint if given.",
        "Other flags go to the job (flink run <jar> --help lists them); its Kafka and PostgreSQL"
            + " default to the local stack's."
      })
  static final class Run implements Callable<Integer> {
    @CommandLine.Mixin RestOption rest = new RestOption();

    @Option(
        names = "--parallelism",
        paramLabel = "N",
        description = "the job's parallelism (default 2)")
    int parallelism = 2;

    @Option(
        names = "--from-savepoint",
        paramLabel = "PATH",
        description = "a savepoint (or retained checkpoint) to start from")
    String fromSavepoint;

    @Option(
        names = "--allow-non-restored-state",
        description =
            "let the savepoint hold state of operators this version does not have, and drop it:"
                + " once, when upgrading across a state layout change (docs/operations.md)")
    boolean allowNonRestoredState;

    @CommandLine.Unmatched List<String> jobFlags = new ArrayList<>();

    @Override
    public Integer call() {
      StackSettings settings = StackSettings.beside(System.getenv(), StackSettings.RUNNING);
      RestEndpoint endpoint = rest.endpoint(settings);
      if (parallelism < 1) {
        throw new IllegalArgumentException("--parallelism must be at least 1, not " + parallelism);
      }
      Optional<String> restoreFrom = Optional.ofNullable(fromSavepoint).map(Run::requireSavepoint);
      try (FlinkRest flink = FlinkRest.connect(endpoint)) {
        int slots = flink.overview().getNumSlotsTotal();
        if (parallelism > slots) {
          throw new IllegalStateException(
              "--parallelism "
                  + parallelism
                  + " needs more slots than the Flink cluster at "
                  + endpoint
                  + " has ("
                  + slots
                  + ")");
        }
        flink
            .activeJob(ClickCountJob.JOB_NAME)
            .ifPresent(
                running -> {
                  throw new IllegalStateException(
                      "a "
                          + ClickCountJob.JOB_NAME
                          + " job is already "
                          + running.getJobState()
                          + " on "
                          + endpoint
                          + " ("
                          + running.getJobId()
                          + "); stop it first: ./tally flink stop");
                });
      }
      List<String> flags =
          JobFlags.withDefaults(
              jobFlags,
              LocalStack.clickJobFlags(
                  "localhost:" + settings.kafkaPort(),
                  TallyCommand.defaultJdbcUrl(settings),
                  settings));
      flags.addAll(List.of("--parallelism", String.valueOf(parallelism)));
      FlinkInstall install = FlinkInstall.fromSystemProperties();
      long started = System.nanoTime();
      JobID job =
          new FlinkCli(install, endpoint, settings.home().resolve("flink").resolve("cli"))
              .runDetached(
                  new FlinkCli.Submission(
                      install.clickJobJar(), flags, restoreFrom, allowNonRestoredState));
      System.out.printf(
          "Submitted %s as job %s (parallelism %d%s) in %.1f s%n",
          ClickCountJob.JOB_NAME,
          job,
          parallelism,
          restoreFrom.map(p -> ", from " + p).orElse(""),
          (System.nanoTime() - started) / 1e9);
      return 0;
    }

    /**
     * The savepoint as a URI for Flink; a local one must exist with its {@code _metadata}, so a
     * typo fails here in one line instead of in the JobManager. Paths on other file systems (s3://)
     * go as given.
     */
    static String requireSavepoint(String path) {
      URI uri =
          path.contains("://") || path.startsWith("file:")
              ? URI.create(path)
              : Path.of(path).toAbsolutePath().toUri();
      if (uri.getScheme() != null && !uri.getScheme().equals("file")) {
        return path;
      }
      Path local = Path.of(uri);
      Path metadata =
          local.getFileName() != null && local.getFileName().toString().equals("_metadata")
              ? local
              : local.resolve("_metadata");
      if (!Files.isRegularFile(metadata)) {
        throw new IllegalArgumentException(
            "no savepoint at " + path + " (no _metadata file there)");
      }
      return metadata.getParent().toUri().toString();
    }
  }

  /** {@code ./tally flink savepoint}: a savepoint of the running job, which goes on. */
  @Command(
      name = "savepoint",
      mixinStandardHelpOptions = true,
      description = "Take a savepoint of the running click job and print its path.")
  static final class Savepoint implements Callable<Integer> {
    @CommandLine.Mixin RestOption rest = new RestOption();
    @CommandLine.Mixin SavepointOptions savepoint = new SavepointOptions();

    @Override
    public Integer call() {
      try (FlinkRest flink = rest.connect()) {
        System.out.println(
            flink.savepoint(savepoint.job(flink), Optional.ofNullable(savepoint.targetDir)));
        return 0;
      }
    }
  }

  /** {@code ./tally flink stop}: stop with a savepoint. */
  @Command(
      name = "stop",
      mixinStandardHelpOptions = true,
      description = "Stop the running click job with a savepoint and print the savepoint's path.")
  static final class Stop implements Callable<Integer> {
    @CommandLine.Mixin RestOption rest = new RestOption();
    @CommandLine.Mixin SavepointOptions savepoint = new SavepointOptions();

    @Override
    public Integer call() {
      try (FlinkRest flink = rest.connect()) {
        System.out.println(
            flink.stopWithSavepoint(
                savepoint.job(flink), Optional.ofNullable(savepoint.targetDir)));
        return 0;
      }
    }
  }

  /** {@code ./tally flink list}: the cluster's jobs, newest first. */
  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description = "List the Flink cluster's jobs (id, state, start time, name), newest first.")
  static final class ListJobs implements Callable<Integer> {
    @CommandLine.Mixin RestOption rest = new RestOption();

    @Override
    public Integer call() {
      try (FlinkRest flink = rest.connect()) {
        List<JobStatusMessage> jobs = List.copyOf(flink.jobs());
        if (jobs.isEmpty()) {
          System.out.println("No jobs on the Flink cluster at " + flink.endpoint() + ".");
        }
        for (JobStatusMessage job : jobs) {
          System.out.printf(
              "%s  %-11s %s  %s%n",
              job.getJobId(),
              job.getJobState(),
              Instant.ofEpochMilli(job.getStartTime()).toString().replaceFirst("\\.\\d+Z$", "Z"),
              job.getJobName());
        }
        return 0;
      }
    }
  }
}
