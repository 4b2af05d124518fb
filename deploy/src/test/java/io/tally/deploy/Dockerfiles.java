package io.tally.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.json.JsonMapper;

/**
 * What the Dockerfiles beside the manifests copy into their images, and what the build names its
 * jars.
 */
final class Dockerfiles {

  private static final Pattern COPY =
      Pattern.compile("(?m)^COPY\\s+(?:--\\S+\\s+)*(\\S+)\\s+(\\S+)\\s*$");

  private Dockerfiles() {}

  /**
   * Each COPY's source (relative to the repository's root, the build context) and its target in the
   * image.
   */
  static Map<String, String> copiedFiles(String dockerfile) {
    Map<String, String> copies = new LinkedHashMap<>();
    Matcher copy = COPY.matcher(read(dockerfile));
    while (copy.find()) {
      copies.put(copy.group(1), copy.group(2));
    }
    return copies;
  }

  /** The image's ENTRYPOINT, written in its exec form (a JSON array). */
  static List<String> entrypoint(String dockerfile) {
    Matcher entrypoint =
        Pattern.compile("(?m)^ENTRYPOINT\\s+(\\[.*])\\s*$").matcher(read(dockerfile));
    if (!entrypoint.find()) {
      throw new AssertionError(dockerfile + " has no ENTRYPOINT in exec form");
    }
    List<String> command = new ArrayList<>();
    JsonMapper.builder()
        .build()
        .readTree(entrypoint.group(1))
        .forEach(part -> command.add(part.asString()));
    return command;
  }

  /** The one EXPOSEd port. */
  static int exposedPort(String dockerfile) {
    Matcher expose = Pattern.compile("(?m)^EXPOSE\\s+(\\d+)\\s*$").matcher(read(dockerfile));
    if (!expose.find()) {
      throw new AssertionError(dockerfile + " exposes no port");
    }
    return Integer.parseInt(expose.group(1));
  }

  /** Where `./mvnw package` leaves a module's attached jar with this classifier. */
  static String builtJar(String module, String classifier) {
    String version = System.getProperty("tally.version");
    if (version == null) {
      throw new IllegalStateException(
          "tally.version is not set: run the tests through Maven (deploy/pom.xml sets it)");
    }
    return module + "/target/" + module + "-" + version + "-" + classifier + ".jar";
  }

  private static String read(String dockerfile) {
    try {
      return Files.readString(Manifests.FOLDER.resolve(dockerfile));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
