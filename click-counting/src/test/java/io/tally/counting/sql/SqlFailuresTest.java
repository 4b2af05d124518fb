package io.tally.counting.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.BatchUpdateException;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Tests for {@link SqlFailures}. */
class SqlFailuresTest {

  @ParameterizedTest(name = "{0} refused data: {1}")
  @CsvSource({
    "22021, true", // NUL in text
    "22001, true", // a value too long for its column
    "23514, true", // a check constraint
    "23505, true", // a unique key
    "54000, true", // an index entry over its limit
    "08006, false", // the connection failed
    "53300, false", // too many connections
    "57P01, false", // the server is shutting down
    "40001, false", // a serialization failure
    "42P01, false" // a missing table: the schema, not the row
  })
  void tellsRefusedDataFromADatabaseThatCannotAnswer(String state, boolean refused) {
    // The JDBC driver reports a failed batch as a BatchUpdateException whose next exception says
    // why.
    BatchUpdateException batch =
        new BatchUpdateException("Batch entry 0 was aborted", null, 0, new int[0], null);
    batch.setNextException(new SQLException("ERROR: …", state));

    assertThat(SqlFailures.refusedData(batch) != null).isEqualTo(refused);
    SQLException wrapped =
        new SQLException("wrapped", "08000", new SQLException("ERROR: …", state));
    assertThat(SqlFailures.refusedData(wrapped) != null).isEqualTo(refused);
  }

  @Test
  void describesAFailureByItsStateAndFirstLine() {
    assertThat(SqlFailures.describe(new SQLException("ERROR: bad\n  Detail: more", "22P05")))
        .isEqualTo("22P05 ERROR: bad");
  }
}
