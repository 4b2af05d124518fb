package io.tally.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.event.ClickFields;
import io.tally.event.LinkCodes;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Tests for {@link PoisonRequests} and {@link RawHttp}. */
class PoisonRequestsTest {

  private static final List<PoisonRequests.Request> ALL = PoisonRequests.all(5);

  private static String header(String kind, String name) {
    return ALL.stream()
        .filter(r -> r.kind().equals(kind))
        .map(r -> new String(r.headers().get(name), StandardCharsets.UTF_8))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void eachKindHasALinkOfItsOwn() {
    assertThat(ALL).extracting(PoisonRequests.Request::kind).doesNotHaveDuplicates();
    assertThat(ALL).extracting(PoisonRequests.Request::code).doesNotHaveDuplicates();
    assertThat(ALL).allMatch(r -> LinkCodes.isValid(r.code()));
  }

  @Test
  void noHeaderValueEndsTheHeaderOrTheRequest() {
    for (PoisonRequests.Request r : ALL) {
      for (byte[] value : r.headers().values()) {
        assertThat(value).as(r.kind()).doesNotContain((byte) '\r', (byte) '\n');
      }
    }
  }

  @Test
  void theHostsAndUserAgentsSitAtAndPastTheirBounds() {
    assertThat(hostOf(header("Referer host of 253 characters in labels of 63", "Referer")))
        .hasSize(ClickFields.MAX_HOST_NAME);
    assertThat(hostOf(header("Referer host of 254 characters", "Referer")))
        .hasSize(ClickFields.MAX_HOST_NAME + 1);
    assertThat(hostOf(header("Referer host of 3,000 characters", "Referer"))).hasSize(3_000);
    assertThat(header("User-Agent of 512 characters, 4-byte ones at its end (UTF-8)", "User-Agent"))
        .hasSize(ClickFields.MAX_USER_AGENT);
    assertThat(
            header(
                "User-Agent of 513 characters, a 4-byte one across the bound (UTF-8)",
                "User-Agent"))
        .hasSize(ClickFields.MAX_USER_AGENT + 1);
  }

  @Test
  void rawHttpSendsTheHeaderBytesAsTheyAreAndReturnsTheStatus() throws Exception {
    try (ServerSocket server = new ServerSocket(0)) {
      CompletableFuture<byte[]> received =
          CompletableFuture.supplyAsync(
              () -> {
                try (Socket s = server.accept()) {
                  InputStream in = s.getInputStream();
                  ByteArrayOutputStream request = new ByteArrayOutputStream();
                  while (!request.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                    request.write(in.read());
                  }
                  s.getOutputStream()
                      .write(
                          "HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                  return request.toByteArray();
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });

      int status =
          RawHttp.get(
              server.getLocalPort(), "/abc", Map.of("User-Agent", new byte[] {'a', 0, 'b'}));

      assertThat(status).isEqualTo(400);
      assertThat(new String(received.get(), StandardCharsets.ISO_8859_1))
          .startsWith("GET /abc HTTP/1.1\r\n")
          .contains("User-Agent: a\u0000b\r\n");
    }
  }

  @Test
  void rawHttpReturnsMinusOneWhenNothingAnswers() throws Exception {
    int port;
    try (ServerSocket closed = new ServerSocket(0)) {
      port = closed.getLocalPort();
    }

    assertThat(RawHttp.get(port, "/abc", Map.of())).isEqualTo(-1);
  }

  private static String hostOf(String url) {
    String rest = url.substring(url.indexOf("//") + 2);
    return rest.substring(0, rest.indexOf('/'));
  }
}
