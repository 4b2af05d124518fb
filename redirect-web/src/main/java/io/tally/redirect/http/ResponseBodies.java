package io.tally.redirect.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import java.nio.charset.StandardCharsets;

/** How every route writes its answer: JSON bodies, JSON errors and CSV downloads. */
public final class ResponseBodies {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The media type of a problem details body (RFC 9457). */
  public static final String PROBLEM_JSON = "application/problem+json";

  private ResponseBodies() {}

  public static ObjectNode object() {
    return JSON.createObjectNode();
  }

  public static void json(Context ctx, JsonNode node) {
    ctx.contentType("application/json");
    ctx.result(node.toString());
  }

  /**
   * The body every refusal carries: a problem details object (RFC 9457) of type {@code
   * about:blank}, whose title is the status's reason phrase and whose detail is {@code message}.
   * {@code error} repeats the detail, as the bodies said it before they followed RFC 9457.
   */
  public static void error(Context ctx, int status, String message) {
    ObjectNode node = object();
    node.put("type", "about:blank");
    node.put("title", HttpStatus.forStatus(status).getMessage());
    node.put("status", status);
    node.put("detail", message);
    node.put("error", message);
    ctx.status(status);
    ctx.contentType(PROBLEM_JSON);
    // As bytes: the server would encode a string in ISO-8859-1 for a media type it does not know to
    // be UTF-8, and JSON is UTF-8.
    ctx.result(node.toString().getBytes(StandardCharsets.UTF_8));
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
