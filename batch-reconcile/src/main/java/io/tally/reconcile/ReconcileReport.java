package io.tally.reconcile;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.stream.Collectors;

/**
 * What one reconcile run read, which part of the range the log covered, what it found and what it
 * changed (or why it refused to change anything); stored as a {@code reconcile_runs} row and
 * printed at the end of the command.
 */
public record ReconcileReport(
    long runId,
    TimeRange range,
    Instant closedBefore,
    boolean dryRun,
    LogCoverage coverage,
    Optional<String> refusal,
    long eventsRead,
    long clicksInRange,
    long distinctClicks,
    SortedMap<String, Long> malformed,
    List<String> refusedRows,
    long minutesChecked,
    long minutesLeftOpen,
    long minutesNotCovered,
    Map<DriftKind, Long> differingByKind,
    long clicksAdded,
    long clicksRemoved,
    long storedClicksChecked,
    Map<AggregateTable, AggregatesReconciler.Result> aggregates) {

  /** The exit status of a command whose run was refused. */
  public static final int EXIT_REFUSED = 3;

  /** Whether the run refused to repair (see {@link #refusal()} for why). */
  public boolean refused() {
    return refusal.isPresent();
  }

  /** Whether the run changed the tables. */
  public boolean repaired() {
    return !dryRun && !refused();
  }

  /** 0, or {@link #EXIT_REFUSED} when the run was refused. */
  public int exitStatus() {
    return refused() ? EXIT_REFUSED : 0;
  }

  public long duplicates() {
    return clicksInRange - distinctClicks;
  }

  public long minutesDiffering() {
    return differingByKind.values().stream().mapToLong(Long::longValue).sum();
  }

  public long differing(DriftKind kind) {
    return differingByKind.getOrDefault(kind, 0L);
  }

  /**
   * The rows of one aggregate table that differed from the recount (missing and unsupported
   * included).
   */
  public long aggregateRowsChanged(AggregateTable table) {
    AggregatesReconciler.Result r = aggregates.get(table);
    return r == null ? 0 : r.changed();
  }

  /** The rows of one aggregate table left untouched because the log did not cover their period. */
  public long aggregateRowsNotCovered(AggregateTable table) {
    AggregatesReconciler.Result r = aggregates.get(table);
    return r == null ? 0 : r.notCovered();
  }

  /** The aggregates' findings as the JSON of {@code reconcile_runs.aggregates}. */
  String aggregatesJson() {
    return aggregates.entrySet().stream()
        .map(
            e ->
                String.format(
                    "\"%s\":{\"from\":\"%s\",\"to\":\"%s\",\"differing\":%d,\"missing\":%d,\"unsupported\":%d,"
                        + "\"not_covered\":%d,\"stored_clicks\":%d,\"clicks_removed\":%d}",
                    e.getKey().table(),
                    e.getValue().from(),
                    e.getValue().to(),
                    e.getValue().differing(),
                    e.getValue().missing(),
                    e.getValue().unsupported(),
                    e.getValue().notCovered(),
                    e.getValue().storedClicks(),
                    e.getValue().clicksRemoved()))
        .collect(Collectors.joining(",", "{", "}"));
  }

  /** A readable summary for the terminal. */
  public String summary() {
    StringBuilder s = new StringBuilder();
    s.append("Reconcile run ")
        .append(runId)
        .append(
            refused()
                ? " REFUSED (nothing changed)"
                : dryRun ? " (dry run: nothing changed)" : " (repaired)")
        .append('\n');
    refusal.ifPresent(why -> s.append(String.format("  refused           %s%n", why)));
    s.append(String.format("  range             %s .. %s%n", range.from(), range.to()));
    s.append(
        String.format(
            "  closed before     %s (later minutes are still live and were left alone)%n",
            closedBefore));
    appendCoverage(s);
    s.append(String.format("  events read       %d%n", eventsRead));
    s.append(
        String.format(
            "  clicks in range   %d (%d distinct, %d duplicates)%n",
            clicksInRange, distinctClicks, duplicates()));
    s.append(
        String.format(
            "  malformed         %s%n",
            malformed.isEmpty()
                ? "none"
                : malformed.entrySet().stream()
                    .map(e -> e.getKey() + "=" + e.getValue())
                    .collect(Collectors.joining(", "))));
    if (!refusedRows.isEmpty()) {
      s.append(
          String.format(
              "  refused rows      %d, which PostgreSQL refused to stage (a breakdown value's"
                  + " clicks are counted under (other)):%n",
              refusedRows.size()));
      refusedRows.forEach(row -> s.append("    ").append(row).append('\n'));
    }
    s.append(
        String.format("  minutes checked   %d (%d left open)%n", minutesChecked, minutesLeftOpen));
    if (minutesNotCovered > 0) {
      s.append(
          String.format(
              "  not covered by the log: %d minutes, left untouched%n", minutesNotCovered));
    }
    s.append(String.format("  minutes differing %d", minutesDiffering()));
    if (minutesDiffering() > 0) {
      s.append(" (");
      s.append(
          differingByKind.entrySet().stream()
              .filter(e -> e.getValue() > 0)
              .map(e -> e.getKey().label() + "=" + e.getValue())
              .collect(Collectors.joining(", ")));
      s.append(')');
    }
    s.append('\n');
    s.append(
        String.format(
            "  %-17s +%d / -%d (of %d stored)%n",
            repaired() ? "clicks changed" : "clicks to change",
            clicksAdded,
            clicksRemoved,
            storedClicksChecked));
    if (minutesDiffering() > 0) {
      s.append("  details: SELECT * FROM reconcile_drift WHERE run_id = ")
          .append(runId)
          .append(";\n");
    }
    aggregates.forEach(
        (table, r) -> {
          if (!r.from().isBefore(r.to())) {
            s.append(String.format("  %-23s no whole closed period in the range%n", table.table()));
          } else {
            s.append(
                String.format(
                    "  %-23s %s .. %s: %d rows %s (%d differing, %d missing, %d unsupported)%s%n",
                    table.table(),
                    r.from(),
                    r.to(),
                    r.changed(),
                    repaired() ? "repaired" : "to repair",
                    r.differing(),
                    r.missing(),
                    r.unsupported(),
                    r.notCovered() > 0
                        ? "; " + r.notCovered() + " not covered by the log, left untouched"
                        : ""));
          }
        });
    return s.toString();
  }

  private void appendCoverage(StringBuilder s) {
    if (coverage == null || !coverage.exists()) {
      s.append(
          String.format(
              "  log coverage      topic '%s' does not exist: nothing covered%n",
              coverage == null ? "?" : coverage.topic()));
      return;
    }
    if (coverage.coversAll(range)) {
      s.append(
          String.format(
              "  log coverage      topic '%s', %d partitions: the whole range%n",
              coverage.topic(), coverage.partitions().size()));
      return;
    }
    s.append(
        String.format(
            "  log coverage      topic '%s', %d partitions:%n",
            coverage.topic(), coverage.partitions().size()));
    for (PartitionCoverage p : coverage.partitions()) {
      s.append(String.format("    partition %-4d  %s%n", p.partition(), p.describe()));
    }
    Instant from = coverage.coveredFrom(range);
    s.append(
        from.equals(range.to())
            ? String.format(
                "    every link      nothing of the range covered: a link's clicks may sit in any"
                    + " partition%n")
            : String.format(
                "    every link      covered from %s, the latest partition's start%n", from));
  }
}
