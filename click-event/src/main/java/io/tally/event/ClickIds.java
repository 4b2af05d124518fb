package io.tally.event;

import com.fasterxml.uuid.Generators;
import com.fasterxml.uuid.impl.TimeBasedEpochGenerator;
import java.util.UUID;

/** Makes click ids: UUIDv7, time-ordered, so ids of one minute sit together in any index. */
public final class ClickIds {

  private static final TimeBasedEpochGenerator GENERATOR = Generators.timeBasedEpochGenerator();

  private ClickIds() {}

  /** A new, unique click id for a click happening now. */
  public static UUID next() {
    return GENERATOR.generate();
  }
}
