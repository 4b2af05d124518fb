package io.tally.event;

/** The outcome of decoding one record: a valid click, or the reason it is not one. */
public sealed interface Decoded {

  /** A record that decoded and passed validation. */
  record Valid(ClickEvent event) implements Decoded {}

  /** A record that must go to the dead letters, with a short human-readable detail. */
  record Malformed(MalformedReason reason, String detail) implements Decoded {}
}
