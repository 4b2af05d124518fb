package io.tally.bench.redirect;

import io.tally.redirect.ClickSink;

/**
 * Counts nothing, not even the click's event: the redirect alone, the ceiling of {@code bench
 * redirect}.
 */
final class NoCounting implements ClickSink {

  @Override
  public void accept(Click click) {}
}
