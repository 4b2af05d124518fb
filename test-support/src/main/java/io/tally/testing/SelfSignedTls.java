package io.tally.testing;

import io.tally.embedded.EmbeddedKafkaBroker.KeyStoreFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A certificate for {@code localhost} made at test time by the JDK's {@code keytool}: a PKCS12 key
 * store for a server to present it, and a PKCS12 trust store holding it for clients, as a cluster's
 * CA bundle is handed to them. Nothing secret is ever checked in.
 *
 * @param keyStore the server's key and certificate
 * @param trustStore the certificate clients trust
 */
public record SelfSignedTls(KeyStoreFile keyStore, KeyStoreFile trustStore) {

  private static final String ALIAS = "localhost";

  /** Makes both stores in {@code dir}, each with its own password. */
  public static SelfSignedTls create(Path dir) {
    try {
      Files.createDirectories(dir);
      KeyStoreFile keyStore = new KeyStoreFile(dir.resolve("server.p12"), "server-store-pw");
      KeyStoreFile trustStore = new KeyStoreFile(dir.resolve("ca.p12"), "trust-store-pw");
      Path certificate = dir.resolve("server.crt");
      keytool(
          "-genkeypair -alias "
              + ALIAS
              + " -keyalg EC -groupname secp256r1 -dname CN=localhost"
              + " -ext SAN=dns:localhost,ip:127.0.0.1 -validity 2",
          keyStore);
      keytool("-exportcert -rfc -alias " + ALIAS, keyStore, "-file", certificate.toString());
      keytool("-importcert -noprompt -alias ca", trustStore, "-file", certificate.toString());
      return new SelfSignedTls(keyStore, trustStore);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Runs keytool with {@code options} (no spaces inside one) on {@code store}, then {@code more}.
   */
  private static void keytool(String options, KeyStoreFile store, String... more)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(options.split(" ")));
    command.addAll(
        List.of(
            "-storetype",
            "PKCS12",
            "-keystore",
            store.path().toString(),
            "-storepass",
            store.password()));
    command.addAll(List.of(more));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
        throw new IllegalStateException("keytool " + options + " failed: " + output);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running keytool", e);
    }
  }
}
