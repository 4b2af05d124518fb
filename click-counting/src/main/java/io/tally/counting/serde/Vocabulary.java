package io.tally.counting.serde;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A field's known values, written as one byte: a click's bot kind, browser, OS, device and country
 * each come from a short fixed list, so on the wire they need no string, and read back they are the
 * list's own instances, which every tally compares by identity first. A value outside the list (a
 * version-1 event's browser, a country the JDK does not know) is written in full behind a zero
 * byte, so nothing is ever refused or changed.
 */
final class Vocabulary {

  private static final int MAX_VALUES = 255;

  private final String[] values;
  private final Map<String, Integer> codes;

  Vocabulary(List<String> values) {
    if (values.size() > MAX_VALUES) {
      throw new IllegalArgumentException(
          "a vocabulary holds at most " + MAX_VALUES + " values, not " + values.size());
    }
    this.values = values.toArray(String[]::new);
    this.codes = new HashMap<>();
    for (int i = 0; i < this.values.length; i++) {
      if (codes.putIfAbsent(this.values[i], i + 1) != null) {
        throw new IllegalArgumentException("the value " + this.values[i] + " is listed twice");
      }
    }
  }

  void write(String value, DataOutputView out) throws IOException {
    Integer code = value == null ? null : codes.get(value);
    if (code == null) {
      out.writeByte(0);
      ClickSerializer.writeString(value, out);
    } else {
      out.writeByte(code);
    }
  }

  String read(DataInputView in) throws IOException {
    int code = in.readUnsignedByte();
    return code == 0 ? ClickSerializer.readString(in) : values[code - 1];
  }
}
