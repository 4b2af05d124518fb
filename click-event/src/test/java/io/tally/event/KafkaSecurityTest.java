package io.tally.event;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.Test;

class KafkaSecurityTest {

  @Test
  void nothingSetIsPlainText() {
    assertThat(KafkaSecurity.of(null, "", " ", null, "", "").clientProperties())
        .containsOnlyKeys("security.protocol")
        .containsEntry("security.protocol", "PLAINTEXT");
  }

  @Test
  void saslOverTlsLogsInWithScramByDefaultAndTrustsTheGivenStore() {
    KafkaSecurity security =
        KafkaSecurity.of("sasl_ssl", "", "tally", "pw", "/etc/tally/ca.p12", "changeit");

    assertThat(security.clientProperties())
        .containsEntry("security.protocol", "SASL_SSL")
        .containsEntry("sasl.mechanism", "SCRAM-SHA-512")
        .containsEntry(
            "sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required"
                + " username=\"tally\" password=\"pw\";")
        .containsEntry("ssl.truststore.location", "/etc/tally/ca.p12")
        .containsEntry("ssl.truststore.type", "PKCS12")
        .containsEntry("ssl.truststore.password", "changeit");
  }

  @Test
  void quotesAndBackslashesInAPasswordStayInsideItsQuotes() {
    KafkaSecurity security = KafkaSecurity.of("SASL_PLAINTEXT", "PLAIN", "u", "a\"b\\c", "", "");

    assertThat(security.clientProperties().get("sasl.jaas.config"))
        .isEqualTo(
            "org.apache.kafka.common.security.plain.PlainLoginModule required"
                + " username=\"u\" password=\"a\\\"b\\\\c\";");
  }

  @Test
  void aPasswordNeverShowsInItsDescription() {
    KafkaSecurity security =
        KafkaSecurity.of("SASL_SSL", "PLAIN", "tally", "hunter2", "/etc/ca.p12", "pw2");

    assertThat(security.toString())
        .contains("SASL_SSL", "PLAIN", "tally")
        .doesNotContain("hunter2", "pw2");
  }

  @Test
  void wrongOrMissingSettingsAreRefusedByName() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KafkaSecurity.of("TLS", "", "", "", "", ""))
        .withMessageContaining("security protocol");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KafkaSecurity.of("SASL_SSL", "GSSAPI", "u", "p", "", ""))
        .withMessageContaining("SASL mechanism");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KafkaSecurity.of("SASL_SSL", "", "u", "", "", ""))
        .withMessageContaining("user name and password");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KafkaSecurity.of("PLAINTEXT", "", "u", "p", "", ""))
        .withMessageContaining("needs a SASL security protocol");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KafkaSecurity.of("SASL_PLAINTEXT", "", "u", "p", "/ca.p12", ""))
        .withMessageContaining("needs a TLS security protocol");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> KafkaSecurity.of("SSL", "", "", "", "", "pw"))
        .withMessageContaining("password needs a truststore");
  }

  @Test
  void aJksTruststoreIsKnownByItsNameInAnyCase() {
    assertThat(KafkaSecurity.of("SSL", "", "", "", "/etc/CA.JKS", "").clientProperties())
        .containsEntry("ssl.truststore.type", "JKS");
  }
}
