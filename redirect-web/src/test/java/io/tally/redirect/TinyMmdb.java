package io.tally.redirect;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a small IPv4 MaxMind-format database with {@code {"country_code": …}} entries, the layout
 * of the ip-location-db country databases, so country lookups are tested on a real file read by the
 * real reader.
 */
final class TinyMmdb {

  private final Map<String, String> networks = new LinkedHashMap<>();

  /** Adds {@code cidr} (e.g. {@code 203.0.113.0/24}) with its country code. */
  TinyMmdb network(String cidr, String countryCode) {
    networks.put(cidr, countryCode);
    return this;
  }

  Path writeTo(Path file) throws IOException {
    // The search tree: node i has two 32-bit records; a record is a node index, "no data" (= node
    // count), or a data pointer (node count + 16 + offset into the data section).
    List<long[]> nodes = new ArrayList<>();
    nodes.add(new long[] {-1, -1});
    ByteArrayOutputStream data = new ByteArrayOutputStream();
    List<long[]> dataRecords = new ArrayList<>();
    for (Map.Entry<String, String> network : networks.entrySet()) {
      String[] parts = network.getKey().split("/");
      long address = ipv4(parts[0]);
      int prefix = Integer.parseInt(parts[1]);
      int node = 0;
      for (int depth = 0; depth < prefix - 1; depth++) {
        int bit = (int) ((address >>> (31 - depth)) & 1);
        if (nodes.get(node)[bit] < 0) {
          nodes.add(new long[] {-1, -1});
          nodes.get(node)[bit] = nodes.size() - 1;
        }
        node = (int) nodes.get(node)[bit];
      }
      int bit = (int) ((address >>> (31 - (prefix - 1))) & 1);
      dataRecords.add(new long[] {node, bit, data.size()});
      writeMap(data, Map.of("country_code", network.getValue()));
    }
    long nodeCount = nodes.size();
    for (long[] record : dataRecords) {
      nodes.get((int) record[0])[(int) record[1]] = -2 - record[2];
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (long[] node : nodes) {
      for (long record : node) {
        long value =
            record == -1 ? nodeCount : record <= -2 ? nodeCount + 16 + (-2 - record) : record;
        out.write(
            new byte[] {
              (byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value
            });
      }
    }
    out.write(new byte[16]);
    out.write(data.toByteArray());
    out.write(new byte[] {(byte) 0xAB, (byte) 0xCD, (byte) 0xEF});
    out.write("MaxMind.com".getBytes(StandardCharsets.US_ASCII));
    writeMetadata(out, nodeCount);
    Files.write(file, out.toByteArray());
    return file;
  }

  private static void writeMetadata(ByteArrayOutputStream out, long nodeCount) throws IOException {
    out.write(0xE0 | 9); // map with 9 entries
    writeString(out, "binary_format_major_version");
    writeUint(out, 5, 2);
    writeString(out, "binary_format_minor_version");
    writeUint(out, 5, 0);
    writeString(out, "build_epoch");
    out.write(0x08); // uint64 (extended type 9), 8 bytes
    out.write(9 - 7);
    out.write(new byte[] {0, 0, 0, 0, 0x65, 0, 0, 0});
    writeString(out, "database_type");
    writeString(out, "tally-test-country");
    writeString(out, "description");
    out.write(0xE0); // empty map
    writeString(out, "ip_version");
    writeUint(out, 5, 4);
    writeString(out, "languages");
    out.write(0x00); // array (extended type 11), no elements
    out.write(11 - 7);
    writeString(out, "node_count");
    writeUint(out, 6, nodeCount);
    writeString(out, "record_size");
    writeUint(out, 5, 32);
  }

  private static void writeMap(ByteArrayOutputStream out, Map<String, String> map)
      throws IOException {
    out.write(0xE0 | map.size());
    for (Map.Entry<String, String> e : map.entrySet()) {
      writeString(out, e.getKey());
      writeString(out, e.getValue());
    }
  }

  private static void writeString(ByteArrayOutputStream out, String s) throws IOException {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    if (bytes.length >= 29) {
      out.write(0x40 | 29);
      out.write(bytes.length - 29);
    } else {
      out.write(0x40 | bytes.length);
    }
    out.write(bytes);
  }

  /** An unsigned integer of type 5 (uint16) or 6 (uint32), in four bytes. */
  private static void writeUint(ByteArrayOutputStream out, int type, long value) {
    out.write((type << 5) | 4);
    out.write((int) (value >>> 24) & 0xff);
    out.write((int) (value >>> 16) & 0xff);
    out.write((int) (value >>> 8) & 0xff);
    out.write((int) value & 0xff);
  }

  private static long ipv4(String dotted) {
    long value = 0;
    for (String octet : dotted.split("\\.")) {
      value = (value << 8) | Integer.parseInt(octet);
    }
    return value;
  }
}
