package io.tally.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import java.util.Arrays;
import java.util.stream.Stream;

/**
 * The lines between Tally's parts, on the main classes of every module: the click event contract
 * stands alone; both jobs are wiring on one counting core, which knows neither; the jobs know
 * nothing of the redirect path or the tools that run them; the redirect path knows nothing of the
 * jobs; the shared local runtime serves the tools without depending on them; no product code
 * reaches for the test fixtures; and no two packages depend on each other.
 */
@AnalyzeClasses(packages = "io.tally", importOptions = ImportOption.DoNotIncludeTests.class)
class ModuleBoundariesTest {

  private static final String CONTRACT = "io.tally.event..";
  private static final String SCHEMA = "io.tally.schema..";
  private static final String EMBEDDED = "io.tally.embedded..";
  private static final String TESTING = "io.tally.testing..";
  private static final String REDIRECT = "io.tally.redirect..";
  private static final String COUNTING = "io.tally.counting..";
  private static final String CLICK_JOB = "io.tally.clickjob..";
  private static final String RECONCILE = "io.tally.reconcile..";
  private static final String LOCAL = "io.tally.local..";
  private static final String LAUNCHER = "io.tally.launcher..";
  private static final String BENCH = "io.tally.bench..";
  private static final String CHAOS = "io.tally.chaos..";

  /** The tools that run Tally on one machine, and the fixtures of its tests. */
  private static final String[] TOOLS = {EMBEDDED, TESTING, LOCAL, LAUNCHER, BENCH, CHAOS};

  @ArchTest
  static final ArchRule contractDependsOnNoOtherModule =
      noClasses()
          .that()
          .resideInAPackage(CONTRACT)
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              SCHEMA, REDIRECT, COUNTING, CLICK_JOB, RECONCILE, EMBEDDED, TESTING, LOCAL, LAUNCHER,
              BENCH, CHAOS)
          .because(
              "the click event contract is shared by producers and consumers that deploy apart");

  @ArchTest
  static final ArchRule jobsDependOnNeitherTheRedirectPathNorTheTools =
      noClasses()
          .that()
          .resideInAnyPackage(COUNTING, CLICK_JOB, RECONCILE)
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(with(TOOLS, REDIRECT))
          .because(
              "the job jars run on any Flink cluster, beside no redirect-web and no embedded"
                  + " stack");

  @ArchTest
  static final ArchRule countingCoreDependsOnNeitherJob =
      noClasses()
          .that()
          .resideInAPackage(COUNTING)
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(CLICK_JOB, RECONCILE)
          .because("both jobs count with the core; it is wiring of neither");

  @ArchTest
  static final ArchRule clickJobDoesNotDependOnReconcile =
      noClasses()
          .that()
          .resideInAPackage(CLICK_JOB)
          .should()
          .dependOnClassesThat()
          .resideInAPackage(RECONCILE)
          .because("what the jobs share is the counting core; reconcile is wiring on it");

  @ArchTest
  static final ArchRule reconcileDoesNotDependOnTheStreamingJob =
      noClasses()
          .that()
          .resideInAPackage(RECONCILE)
          .should()
          .dependOnClassesThat()
          .resideInAPackage(CLICK_JOB)
          .because("what the jobs share is the counting core; the streaming job is wiring on it");

  @ArchTest
  static final ArchRule operatorsDoNotDependOnTheJobWiring =
      noClasses()
          .that()
          .resideInAnyPackage(
              "io.tally.clickjob.functions..",
              "io.tally.clickjob.io..",
              "io.tally.counting.functions..",
              "io.tally.counting.serde..",
              "io.tally.counting.sql..",
              "io.tally.counting.records..",
              "io.tally.counting.periods..",
              "io.tally.counting.classify..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage("io.tally.clickjob", "io.tally.counting")
          .because(
              "operators take what they need as arguments, so tests run them on harnesses without"
                  + " a job's options, and both jobs use them as they are");

  @ArchTest
  static final ArchRule recordsDependOnlyOnTheContract =
      noClasses()
          .that()
          .resideInAPackage("io.tally.counting.records..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "io.tally.counting.functions..",
              "io.tally.counting.periods..",
              "io.tally.counting.serde..",
              "io.tally.counting.sql..",
              "io.tally.counting.classify..")
          .because("records are the data between operators, not their logic");

  @ArchTest
  static final ArchRule packagesAreFreeOfCycles =
      slices()
          .matching("io.tally.(**)")
          .should()
          .beFreeOfCycles()
          .because(
              "a package that depends on another that depends on it cannot be read, tested or"
                  + " moved alone");

  @ArchTest
  static final ArchRule redirectPathDependsOnNeitherTheJobsNorTheTools =
      noClasses()
          .that()
          .resideInAPackage(REDIRECT)
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(with(TOOLS, COUNTING, CLICK_JOB, RECONCILE))
          .because(
              "redirect-web deploys and scales apart from the jobs; benchmarks plug in through its"
                  + " seam");

  @ArchTest
  static final ArchRule localRuntimeServesTheToolsWithoutDependingOnThem =
      noClasses()
          .that()
          .resideInAPackage(LOCAL)
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(LAUNCHER, BENCH, CHAOS, TESTING, REDIRECT)
          .because(
              "./tally up, bench and chaos share one runtime, which knows none of them: it runs"
                  + " the two jobs, never the redirect path");

  @ArchTest
  static final ArchRule benchmarksAndFaultRunsDoNotDependOnTheLauncher =
      noClasses()
          .that()
          .resideInAnyPackage(BENCH, CHAOS)
          .should()
          .dependOnClassesThat()
          .resideInAPackage(LAUNCHER)
          .because(
              "the launcher is the user's command; what the tools share lives in the local"
                  + " runtime");

  @ArchTest
  static final ArchRule chaosDoesNotDependOnTheBenchmarks =
      noClasses()
          .that()
          .resideInAPackage(CHAOS)
          .should()
          .dependOnClassesThat()
          .resideInAPackage(BENCH)
          .because("fault scenarios share the local runtime, not the benchmarks' code");

  @ArchTest
  static final ArchRule benchmarksDoNotDependOnChaos =
      noClasses()
          .that()
          .resideInAPackage(BENCH)
          .should()
          .dependOnClassesThat()
          .resideInAPackage(CHAOS)
          .because("benchmarks share the local runtime, not the fault scenarios' code");

  @ArchTest
  static final ArchRule productCodeDoesNotUseTestFixtures =
      noClasses()
          .that()
          .resideInAnyPackage(
              CONTRACT, SCHEMA, REDIRECT, COUNTING, CLICK_JOB, RECONCILE, LOCAL, LAUNCHER)
          .should()
          .dependOnClassesThat()
          .resideInAPackage(TESTING)
          .because("test builders and oracles live in test-support, out of what users run");

  private static String[] with(String[] packages, String... more) {
    return Stream.concat(Arrays.stream(packages), Arrays.stream(more)).toArray(String[]::new);
  }
}
