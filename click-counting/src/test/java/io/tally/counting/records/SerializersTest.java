package io.tally.counting.records;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.periods.ClickTally;
import io.tally.counting.periods.MinuteTotals;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every record that crosses the network between the job's operators, or lives in its state, gets a
 * serializer of Flink's own: Kryo, the generic fallback, is several times slower and is what a
 * field type Flink cannot analyse silently brings back.
 */
class SerializersTest {

  @ParameterizedTest
  @ValueSource(
      classes = {
        Click.class,
        MinuteTotals.class,
        ClickTally.class,
        PeriodTotals.class,
        DimensionCount.class,
        MinuteCount.class,
        DeadLetter.class,
        RawClick.class
      })
  void noRecordFallsBackToKryo(Class<?> type) {
    TypeSerializer<?> serializer =
        TypeInformation.of(type).createSerializer(new SerializerConfigImpl());

    assertThat(serializer).isNotInstanceOf(KryoSerializer.class);
    assertThat(serializer.toString()).doesNotContain("Kryo");
  }
}
