package io.tally.redirect.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.http.Context;

/** How every route writes its answer: JSON bodies, JSON errors and CSV downloads. */
public final class ResponseBodies {

  private static final ObjectMapper JSON = new ObjectMapper();

  private ResponseBodies() {}

  public static ObjectNode object() {
    return JSON.createObjectNode();
  }

  public static void json(Context ctx, JsonNode node) {
    ctx.contentType("application/json");
    ctx.result(node.toString());
  }

  /** The error body every refusal carries: {@code {"status": …, "error": "…"}}. */
  public static void error(Context ctx, int status, String message) {
    ObjectNode node = object();
    node.put("status", status);
    node.put("error", message);
    ctx.status(status);
    json(ctx, node);
  }

  /** A CSV download; {@code text} starts with its header line. */
  public static void csv(Context ctx, String filename, String text) {
    ctx.contentType("text/csv; charset=utf-8");
    ctx.header("Content-Disposition", "attachment; filename=\"" + filename + "\"");
    ctx.result(text);
  }

  /**
   * One CSV field, quoted when it holds a separator, a quote or a line break (RFC 4180). A field
   * that a spreadsheet would read as a formula (one starting with {@code = + - @}, a tab or a
   * carriage return) is prefixed with {@code '} and quoted, as OWASP advises: a referrer or an
   * agent is written by whoever clicked.
   */
  public static String csvField(String value) {
    boolean formula = !value.isEmpty() && "=+-@\t\r".indexOf(value.charAt(0)) >= 0;
    if (!formula
        && value.indexOf(',') < 0
        && value.indexOf('"') < 0
        && value.indexOf('\n') < 0
        && value.indexOf('\r') < 0) {
      return value;
    }
    return '"' + (formula ? "'" : "") + value.replace("\"", "\"\"") + '"';
  }
}
