package io.tally.launcher;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;

/**
 * Development secrets the local stack makes once and keeps in its home folder, readable by the
 * owner only, so that a restart keeps the same API key and the same client-address hashes.
 */
final class HomeSecrets {

  private static final SecureRandom RANDOM = new SecureRandom();

  private HomeSecrets() {}

  /** The secret stored in {@code file}, if one has been made. */
  static Optional<String> read(Path file) {
    try {
      return Files.isRegularFile(file)
          ? Optional.of(Files.readString(file, StandardCharsets.UTF_8).trim())
          : Optional.empty();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the secret in " + file, e);
    }
  }

  /** The secret stored in {@code file}, made on first use. */
  static String readOrCreate(Path file, String prefix) {
    try {
      Optional<String> kept = read(file);
      if (kept.isPresent()) {
        return kept.get();
      }
      byte[] bytes = new byte[24];
      RANDOM.nextBytes(bytes);
      String secret = prefix + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
      Files.createDirectories(file.getParent());
      try {
        // Created readable by its owner only, so the secret is never on disk with wider
        // permissions.
        Files.createFile(
            file,
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      } catch (UnsupportedOperationException e) {
        // Not a POSIX file system: the folder's own permissions have to do.
      }
      Files.writeString(file, secret + "\n", StandardCharsets.UTF_8);
      return secret;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot keep a secret in " + file, e);
    }
  }
}
