package io.tally.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Looks for client addresses where none may be: every record of the click and dead-letter topics
 * (key, value and headers), every row of every table (each row cast to text whole), and the given
 * log files. Returns the hits per place; an empty map means none was found.
 */
final class PrivacyScan {

  private PrivacyScan() {}

  static Map<String, Long> scan(ChaosStack stack, Collection<String> addresses, List<Path> logs)
      throws SQLException, IOException {
    Map<String, Long> hits = new TreeMap<>();
    for (String topic : List.of(ChaosStack.CLICKS, ChaosStack.DEAD_LETTERS)) {
      for (ConsumerRecord<byte[], byte[]> r : stack.readAll(topic)) {
        List<byte[]> parts = new ArrayList<>(Arrays.asList(r.key(), r.value()));
        r.headers().forEach(h -> parts.add(h.value()));
        for (byte[] part : parts) {
          String text = part == null ? "" : new String(part, StandardCharsets.UTF_8);
          count(hits, "topic " + topic, text, addresses);
        }
      }
    }
    try (Connection c = stack.services().connect();
        Statement s = c.createStatement()) {
      List<String> tables = new ArrayList<>();
      try (ResultSet rs =
          s.executeQuery(
              "SELECT quote_ident(table_name) FROM information_schema.tables"
                  + " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'")) {
        while (rs.next()) {
          tables.add(rs.getString(1));
        }
      }
      for (String table : tables) {
        try (ResultSet rs = s.executeQuery("SELECT t::text FROM " + table + " t")) {
          while (rs.next()) {
            count(hits, "table " + table, rs.getString(1), addresses);
          }
        }
      }
    }
    for (Path log : logs) {
      if (Files.exists(log)) {
        String text = Files.readString(log, StandardCharsets.ISO_8859_1);
        count(hits, "log " + log.getFileName(), text, addresses);
      }
    }
    return hits;
  }

  private static void count(
      Map<String, Long> hits, String where, String text, Collection<String> addresses) {
    occurrences(text, addresses)
        .forEach((address, n) -> hits.merge(where + " (" + address + ")", n, Long::sum));
  }

  /** How often each address occurs in {@code text}; addresses that do not occur are left out. */
  static Map<String, Long> occurrences(String text, Collection<String> addresses) {
    Map<String, Long> found = new TreeMap<>();
    for (String address : addresses) {
      for (int at = text.indexOf(address); at >= 0; at = text.indexOf(address, at + 1)) {
        found.merge(address, 1L, Long::sum);
      }
    }
    return found;
  }
}
