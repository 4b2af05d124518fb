package io.tally.event;

/**
 * Why a record on the click topic is not a usable click event; the lower-case name is what reports
 * and the DLQ show.
 */
public enum MalformedReason {
  /** Larger than {@link ClickEventCodec#MAX_EVENT_BYTES}. */
  OVERSIZED,
  /** Not a JSON object. */
  NOT_JSON,
  /** The {@code v} field is missing or not a version this code understands. */
  SCHEMA_VERSION,
  /** {@code click_id} is missing or not a UUID. */
  CLICK_ID,
  /** {@code code} is missing or not a valid link code. */
  CODE,
  /** {@code ts} is missing or not an integer. */
  TS,
  /** {@code ts} is implausibly far in the past or the future. */
  TS_OUT_OF_RANGE,
  /** A descriptive field has the wrong JSON type. */
  FIELD_TYPE,
  /** A descriptive field's value is out of its bound ({@link ClickFields}). */
  FIELD_VALUE;

  /** The name used in metrics, reports and dead-letter records. */
  public String label() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
