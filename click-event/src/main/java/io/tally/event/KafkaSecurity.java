package io.tally.event;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * How every Tally client reaches Kafka: in plain text on a trusted network, or with TLS, SASL or
 * both, as redirect-web, the click job and reconcile all take it. Checked when made, so that a
 * mistyped protocol or a missing password fails at start with its name rather than as a client that
 * never connects. {@link #toString()} never shows a password.
 */
public final class KafkaSecurity implements Serializable {

  private static final long serialVersionUID = 1L;

  /** Kafka's {@code security.protocol} values. */
  public static final Set<String> PROTOCOLS =
      Set.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL");

  /** SASL mechanisms with a user name and password. */
  public static final Set<String> MECHANISMS = Set.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512");

  /** No TLS, no SASL: Kafka on a network only Tally's components reach. */
  public static final KafkaSecurity PLAINTEXT = new KafkaSecurity("PLAINTEXT", "", "", "", "", "");

  private final String protocol;
  private final String mechanism;
  private final String username;
  private final String password;
  private final String truststore;
  private final String truststorePassword;

  private KafkaSecurity(
      String protocol,
      String mechanism,
      String username,
      String password,
      String truststore,
      String truststorePassword) {
    this.protocol = protocol;
    this.mechanism = mechanism;
    this.username = username;
    this.password = password;
    this.truststore = truststore;
    this.truststorePassword = truststorePassword;
  }

  /**
   * The settings as given; blank ones are unset.
   *
   * @param protocol {@code security.protocol}, PLAINTEXT when blank
   * @param mechanism the SASL mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512), SCRAM-SHA-512 when
   *     blank with a SASL protocol
   * @param username the SASL user
   * @param password the SASL user's password
   * @param truststore a truststore file (PKCS12 or JKS) with the brokers' CA; the JVM's own CAs
   *     when blank
   * @param truststorePassword the truststore's password
   * @throws IllegalArgumentException naming the setting that is wrong or missing
   */
  public static KafkaSecurity of(
      String protocol,
      String mechanism,
      String username,
      String password,
      String truststore,
      String truststorePassword) {
    String p = blank(protocol) ? "PLAINTEXT" : protocol.trim().toUpperCase(Locale.ROOT);
    if (!PROTOCOLS.contains(p)) {
      throw new IllegalArgumentException(
          "Kafka security protocol must be one of " + PROTOCOLS + ", not '" + protocol + "'");
    }
    boolean sasl = p.startsWith("SASL_");
    boolean tls = p.endsWith("SSL");
    String m = blank(mechanism) ? "" : mechanism.trim().toUpperCase(Locale.ROOT);
    if (sasl) {
      m = m.isEmpty() ? "SCRAM-SHA-512" : m;
      if (!MECHANISMS.contains(m)) {
        throw new IllegalArgumentException(
            "Kafka SASL mechanism must be one of " + MECHANISMS + ", not '" + mechanism + "'");
      }
      if (blank(username) || blank(password)) {
        throw new IllegalArgumentException(
            "Kafka security protocol " + p + " needs a SASL user name and password");
      }
    } else if (!m.isEmpty() || !blank(username) || !blank(password)) {
      throw new IllegalArgumentException(
          "a Kafka SASL mechanism, user or password needs a SASL security protocol, not " + p);
    }
    if (!tls && (!blank(truststore) || !blank(truststorePassword))) {
      throw new IllegalArgumentException(
          "a Kafka truststore needs a TLS security protocol (SSL or SASL_SSL), not " + p);
    }
    if (blank(truststore) && !blank(truststorePassword)) {
      throw new IllegalArgumentException("a Kafka truststore password needs a truststore");
    }
    return new KafkaSecurity(
        p,
        m,
        sasl ? username.trim() : "",
        sasl ? password : "",
        blank(truststore) ? "" : truststore.trim(),
        blank(truststorePassword) ? "" : truststorePassword);
  }

  private static boolean blank(String value) {
    return value == null || value.isBlank();
  }

  /** The client settings that carry this security, to add to any producer, consumer or admin. */
  public Map<String, String> clientProperties() {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("security.protocol", protocol);
    if (!mechanism.isEmpty()) {
      p.put("sasl.mechanism", mechanism);
      String module =
          mechanism.equals("PLAIN")
              ? "org.apache.kafka.common.security.plain.PlainLoginModule"
              : "org.apache.kafka.common.security.scram.ScramLoginModule";
      p.put(
          "sasl.jaas.config",
          module
              + " required username=\""
              + quoted(username)
              + "\" password=\""
              + quoted(password)
              + "\";");
    }
    if (!truststore.isEmpty()) {
      p.put("ssl.truststore.location", truststore);
      p.put(
          "ssl.truststore.type",
          truststore.toLowerCase(Locale.ROOT).endsWith(".jks") ? "JKS" : "PKCS12");
      if (!truststorePassword.isEmpty()) {
        p.put("ssl.truststore.password", truststorePassword);
      }
    }
    return p;
  }

  /** A value inside the JAAS configuration's double quotes. */
  private static String quoted(String value) {
    return value.replace("\\", "\\\\").replace("\"", "\\\"");
  }

  /** Kafka's {@code security.protocol}: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL. */
  public String protocol() {
    return protocol;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof KafkaSecurity o
        && protocol.equals(o.protocol)
        && mechanism.equals(o.mechanism)
        && username.equals(o.username)
        && password.equals(o.password)
        && truststore.equals(o.truststore)
        && truststorePassword.equals(o.truststorePassword);
  }

  @Override
  public int hashCode() {
    return Objects.hash(protocol, mechanism, username, truststore);
  }

  @Override
  public String toString() {
    return protocol
        + (mechanism.isEmpty() ? "" : " " + mechanism + " as " + username)
        + (truststore.isEmpty() ? "" : " trusting " + truststore);
  }
}
