package io.tally.counting.sql;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.lang.reflect.RecordComponent;
import java.util.Base64;

/**
 * A row record as a JSON object of its components, for a dead letter: text escaped to ASCII, so
 * that a value PostgreSQL refused (a NUL, a lone surrogate) survives as it was; bytes as base64.
 */
public final class RowJson {

  private static final JsonFactory JSON =
      JsonFactory.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

  private RowJson() {}

  /** The record's components by name, in order. */
  public static String of(Record row) {
    StringWriter out = new StringWriter();
    try (JsonGenerator gen = JSON.createGenerator(out)) {
      gen.writeStartObject();
      for (RecordComponent component : row.getClass().getRecordComponents()) {
        Object value = component.getAccessor().invoke(row);
        gen.writeFieldName(component.getName());
        if (value == null) {
          gen.writeNull();
        } else if (value instanceof Number number) {
          gen.writeNumber(number.longValue());
        } else if (value instanceof byte[] bytes) {
          gen.writeString(Base64.getEncoder().encodeToString(bytes));
        } else if (value instanceof String[] texts) {
          gen.writeArray(texts, 0, texts.length);
        } else {
          gen.writeString(value.toString());
        }
      }
      gen.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot read " + row.getClass().getSimpleName(), e);
    }
    return out.toString();
  }
}
