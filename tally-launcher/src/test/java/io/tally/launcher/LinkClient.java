package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a user does over HTTP in the stack tests: create a link with the API key, follow it as a
 * browser (or as any client), read the stats API.
 */
final class LinkClient {

  private static final String BROWSER =
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0"
          + " Safari/537.36";
  private static final Pattern CODE = Pattern.compile("\"code\":\"([^\"]+)\"");
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http =
      HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
  private final String baseUrl;
  private final String apiKey;

  LinkClient(String baseUrl, String apiKey) {
    this.baseUrl = baseUrl;
    this.apiKey = apiKey;
  }

  /** Creates a link to {@code url} and returns its code. */
  String createLink(String url) throws Exception {
    HttpResponse<String> created =
        http.send(
            HttpRequest.newBuilder(URI.create(baseUrl + "/api/links"))
                .header("Authorization", "Bearer " + apiKey)
                .POST(HttpRequest.BodyPublishers.ofString("{\"url\":\"" + url + "\"}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(created.statusCode()).isEqualTo(201);
    Matcher code = CODE.matcher(created.body());
    assertThat(code.find()).isTrue();
    return code.group(1);
  }

  /**
   * The API's refusal of a create request, as an API client meets it: asserts its status and
   * returns its error message.
   *
   * @param code the custom code asked for, or null for a generated one
   * @param key the API key sent, or null to send none
   */
  String refusedCreate(String url, String code, String key, int status) throws Exception {
    ObjectNode body = JSON.createObjectNode().put("url", url);
    if (code != null) {
      body.put("code", code);
    }
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(baseUrl + "/api/links"))
            .POST(HttpRequest.BodyPublishers.ofString(body.toString()));
    if (key != null) {
      request.header("Authorization", "Bearer " + key);
    }
    HttpResponse<String> answer = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    assertThat(answer.statusCode())
        .as("POST /api/links %s: %s", body, answer.body())
        .isEqualTo(status);
    return JSON.readTree(answer.body()).path("error").asText();
  }

  /**
   * Opens {@code shortUrl} once as a browser would, and returns the answer without following it.
   */
  HttpResponse<Void> open(String shortUrl) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(shortUrl)).header("User-Agent", BROWSER).build(),
        HttpResponse.BodyHandlers.discarding());
  }

  /** Follows the short link {@code times} times, each answered with a redirect. */
  void follow(String code, int times) throws Exception {
    follow(code, times, BROWSER, null, "GET");
  }

  /**
   * Follows the short link {@code times} times as one client, each answered with a redirect.
   *
   * @param userAgent the User-Agent header sent
   * @param referrer the Referer header sent, or null for none
   * @param method {@code GET} or {@code HEAD}
   */
  void follow(String code, int times, String userAgent, String referrer, String method)
      throws Exception {
    for (int i = 0; i < times; i++) {
      HttpRequest.Builder request =
          HttpRequest.newBuilder(URI.create(baseUrl + "/" + code))
              .header("User-Agent", userAgent)
              .method(method, HttpRequest.BodyPublishers.noBody());
      if (referrer != null) {
        request.header("Referer", referrer);
      }
      HttpResponse<Void> redirect =
          http.send(request.build(), HttpResponse.BodyHandlers.discarding());
      assertThat(redirect.statusCode()).as("%s %s as %s", method, code, userAgent).isEqualTo(302);
    }
  }

  /** A read API answer, such as {@code /api/links/CODE/stats?from=1h}, read with the API key. */
  JsonNode get(String pathAndQuery) throws Exception {
    HttpResponse<String> answer =
        http.send(
            HttpRequest.newBuilder(URI.create(baseUrl + pathAndQuery))
                .header("Authorization", "Bearer " + apiKey)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(answer.statusCode()).as("GET %s: %s", pathAndQuery, answer.body()).isEqualTo(200);
    return JSON.readTree(answer.body());
  }
}
