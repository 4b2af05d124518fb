package io.tally.bench.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Tests for {@link Columns}, which declares a table's headers beside the cells they head. */
class ColumnsTest {

  record Latency(double p50, double p99) {}

  record Cell(String mode, int connections, Latency latency) {}

  private static String printed(io.tally.testing.Table table) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    table.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void eachRowIsItsCellsUnderTheHeadersInTheOrderDeclared() {
    Columns<Latency> latency =
        new Columns<Latency>().and("p50 ms", Latency::p50).and("p99 ms", Latency::p99);
    Columns<Cell> columns =
        new Columns<Cell>()
            .and("mode", Cell::mode)
            .and("connections", Cell::connections)
            .and(latency, Cell::latency);

    String table =
        printed(
            columns.table(
                "cells",
                List.of(
                    new Cell("async", 64, new Latency(1.5, 8.5)),
                    new Cell("sync", 4, new Latency(2.0, 186.0)))));

    assertThat(table)
        .contains("## cells")
        .contains("| mode  | connections | p50 ms | p99 ms |")
        .containsSubsequence(
            "| async |          64 |    1.5 |    8.5 |",
            "| sync  |           4 |    2.0 |  186.0 |");
  }

  @Test
  void addingAColumnLeavesTheColumnsItWasAddedToAsTheyWere() {
    Columns<Cell> base = new Columns<Cell>().and("mode", Cell::mode);
    base.and("connections", Cell::connections);

    assertThat(printed(base.table("t", List.of(new Cell("off", 16, null)))))
        .contains("| mode |")
        .doesNotContain("connections");
  }
}
