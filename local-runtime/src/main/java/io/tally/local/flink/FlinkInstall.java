package io.tally.local.flink;

import io.tally.local.FlinkCommandFailure;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * What the JVMs that {@code ./tally up --cluster} and {@code ./tally chaos} start for Flink need,
 * in place of a Flink distribution: a java binary, Flink's Java 17 opens, Flink's own jars (the
 * {@code flink-cluster} module's classpath) and Tally's two job jars. {@code ./tally} passes them
 * as system properties, the integration tests through failsafe.
 *
 * @param java the java binary, this JVM's own
 * @param jvmOpens the {@code --add-opens}/{@code --add-exports} list every JVM hosting Flink needs
 * @param classpath Flink's jars and logging, nothing of Tally's: jobs reach the cluster in their
 *     jars
 * @param clickJobJar the click job's shaded jar
 * @param reconcileJobJar the batch reconcile job's shaded jar
 */
public record FlinkInstall(
    String java, List<String> jvmOpens, String classpath, Path clickJobJar, Path reconcileJobJar) {

  /** The system property naming the file that holds the cluster's classpath. */
  public static final String CLASSPATH_FILE = "tally.flink.classpath.file";

  public static final String CLICK_JOB_JAR = "tally.click.job.jar";
  public static final String RECONCILE_JOB_JAR = "tally.reconcile.job.jar";
  public static final String JVM_OPENS = "flink.jvm.opens";

  /**
   * Reads the install from the system properties {@code ./tally} sets; fails naming what is
   * missing.
   */
  public static FlinkInstall fromSystemProperties() {
    Path classpathFile = Path.of(required(CLASSPATH_FILE));
    String classpath;
    try {
      classpath = Files.readString(classpathFile).trim();
    } catch (IOException e) {
      throw new FlinkCommandFailure(
          "cannot read Flink's classpath from "
              + classpathFile
              + " (built by `./mvnw package` in flink-cluster)",
          e);
    }
    return new FlinkInstall(
        ProcessHandle.current().info().command().orElse("java"),
        Arrays.stream(System.getProperty(JVM_OPENS, "").trim().split("\\s+"))
            .filter(s -> !s.isEmpty())
            .toList(),
        classpath,
        existing(CLICK_JOB_JAR),
        existing(RECONCILE_JOB_JAR));
  }

  private static String required(String property) {
    String value = System.getProperty(property);
    if (value == null || value.isBlank()) {
      throw new IllegalStateException(
          "system property " + property + " is not set; run Tally through ./tally");
    }
    return value;
  }

  private static Path existing(String property) {
    Path jar = Path.of(required(property));
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(
          "no job jar at " + jar + "; build it with ./mvnw package -DskipTests");
    }
    return jar.toAbsolutePath();
  }
}
