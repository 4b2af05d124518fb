package io.tally.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The dead-letter topic's records as the job wrote them ({@code reason}, {@code detail}, {@code
 * raw_base64}, ...).
 */
public final class DeadLetters {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<JsonNode> letters = new ArrayList<>();

  DeadLetters(List<byte[]> values) {
    for (byte[] value : values) {
      try {
        letters.add(JSON.readTree(value));
      } catch (IOException e) {
        throw new UncheckedIOException("a dead letter that is not JSON", e);
      }
    }
  }

  public List<JsonNode> all() {
    return letters;
  }

  /** Reason → letters. */
  public Map<String, Long> byReason() {
    Map<String, Long> counts = new TreeMap<>();
    letters.forEach(l -> counts.merge(l.path("reason").asText(), 1L, Long::sum));
    return counts;
  }

  /** The reason given to the record with these raw bytes ({@code null} for a tombstone), if any. */
  public List<String> reasonsOf(String rawBase64) {
    return letters.stream()
        .filter(letter -> holds(letter, rawBase64))
        .map(letter -> letter.path("reason").asText())
        .toList();
  }

  /**
   * The letters that hold none of these records (raw bytes in base64, {@code null} for a
   * tombstone): those a scenario did not expect, such as a refused row, which holds no record.
   */
  public List<JsonNode> except(Collection<String> rawBase64s) {
    return letters.stream()
        .filter(letter -> rawBase64s.stream().noneMatch(raw -> holds(letter, raw)))
        .toList();
  }

  /**
   * Whether {@code letter} holds this record. A tombstone's letter has {@code raw_base64} null; a
   * refused row's has none, and holds no record.
   */
  private static boolean holds(JsonNode letter, String rawBase64) {
    JsonNode raw = letter.path("raw_base64");
    return rawBase64 == null ? raw.isNull() : rawBase64.equals(raw.asText(null));
  }
}
