package io.tally.launcher;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code ./tally key}: the API key of the stack, from any shell, so that a script needs neither the
 * stack's data folder nor the key pasted in.
 */
@Command(
    name = "key",
    description = "Print the links API key of the stack (the one ./tally up uses or made).")
final class KeyCommand implements Callable<Integer> {

  @CommandLine.Option(
      names = "--read-only",
      description = "the read-only key instead (stats, lists of links, the dashboard)")
  boolean readOnly;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine()
        .getOut()
        .println(key(StackSettings.beside(System.getenv(), StackSettings.RUNNING), readOnly));
    return 0;
  }

  /** The key {@code ./tally up} gives redirect-web with these settings; it never makes one. */
  static String key(StackSettings settings, boolean readOnly) {
    if (!readOnly && settings.apiKey().isPresent()) {
      return settings.apiKey().get();
    }
    Path file = readOnly ? settings.readApiKeyFile() : settings.apiKeyFile();
    return HomeSecrets.read(file)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "no key in " + file + " yet: ./tally up makes it on its first start"));
  }
}
