package io.tally.reconcile;

import java.time.Instant;
import java.util.Map;
import java.util.SortedMap;
import java.util.stream.Collectors;

/**
 * What one reconcile run read, found and changed; stored as a {@code reconcile_runs} row and printed at
 * the end of the command.
 */
public record ReconcileReport(
    long runId,
    TimeRange range,
    Instant closedBefore,
    boolean dryRun,
    long eventsRead,
    long clicksInRange,
    long distinctClicks,
    SortedMap<String, Long> malformed,
    long minutesChecked,
    long minutesLeftOpen,
    Map<DriftKind, Long> differingByKind,
    long clicksAdded,
    long clicksRemoved,
    Map<AggregateTable, AggregatesReconciler.Result> aggregates) {

  public long duplicates() {
    return clicksInRange - distinctClicks;
  }

  public long minutesDiffering() {
    return differingByKind.values().stream().mapToLong(Long::longValue).sum();
  }

  public long differing(DriftKind kind) {
    return differingByKind.getOrDefault(kind, 0L);
  }

  /** The rows of one aggregate table that differed from the recount (missing and unsupported included). */
  public long aggregateRowsChanged(AggregateTable table) {
    AggregatesReconciler.Result r = aggregates.get(table);
    return r == null ? 0 : r.changed();
  }

  /** The aggregates' findings as the JSON of {@code reconcile_runs.aggregates}. */
  String aggregatesJson() {
    return aggregates.entrySet().stream()
        .map(e -> String.format("\"%s\":{\"from\":\"%s\",\"to\":\"%s\",\"differing\":%d,\"missing\":%d,\"unsupported\":%d}",
            e.getKey().table(), e.getValue().from(), e.getValue().to(), e.getValue().differing(), e.getValue().missing(),
            e.getValue().unsupported()))
        .collect(Collectors.joining(",", "{", "}"));
  }

  /** A readable summary for the terminal. */
  public String summary() {
    StringBuilder s = new StringBuilder();
    s.append("Reconcile run ").append(runId).append(dryRun ? " (dry run: nothing changed)" : " (repaired)").append('\n');
    s.append(String.format("  range             %s .. %s%n", range.from(), range.to()));
    s.append(String.format("  closed before     %s (later minutes are still live and were left alone)%n", closedBefore));
    s.append(String.format("  events read       %d%n", eventsRead));
    s.append(String.format("  clicks in range   %d (%d distinct, %d duplicates)%n", clicksInRange, distinctClicks, duplicates()));
    s.append(String.format("  malformed         %s%n", malformed.isEmpty() ? "none"
        : malformed.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(", "))));
    s.append(String.format("  minutes checked   %d (%d left open)%n", minutesChecked, minutesLeftOpen));
    s.append(String.format("  minutes differing %d", minutesDiffering()));
    if (minutesDiffering() > 0) {
      s.append(" (");
      s.append(differingByKind.entrySet().stream().filter(e -> e.getValue() > 0)
          .map(e -> e.getKey().label() + "=" + e.getValue()).collect(Collectors.joining(", ")));
      s.append(')');
    }
    s.append('\n');
    s.append(String.format("  %-17s +%d / -%d%n", dryRun ? "clicks to change" : "clicks changed", clicksAdded, clicksRemoved));
    if (minutesDiffering() > 0) {
      s.append("  details: SELECT * FROM reconcile_drift WHERE run_id = ").append(runId).append(";\n");
    }
    aggregates.forEach((table, r) -> {
      if (!r.from().isBefore(r.to())) {
        s.append(String.format("  %-23s no whole closed period in the range%n", table.table()));
      } else {
        s.append(String.format("  %-23s %s .. %s: %d rows %s (%d differing, %d missing, %d unsupported)%n",
            table.table(), r.from(), r.to(), r.changed(), dryRun ? "to repair" : "repaired", r.differing(), r.missing(),
            r.unsupported()));
      }
    });
    return s.toString();
  }
}
