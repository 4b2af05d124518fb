package io.tally.redirect;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A keyed hash (HMAC-SHA256, truncated to 128 bits) of a client address. The same address gives the same
 * hash under one secret, so unique visitors can be told apart, while the address itself cannot be read
 * back or brute-forced without the secret. The raw address is never stored or logged.
 */
public final class IpHasher {

  private final ThreadLocal<Mac> mac;

  public IpHasher(String secret) {
    SecretKeySpec key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
    this.mac = ThreadLocal.withInitial(() -> {
      try {
        Mac m = Mac.getInstance("HmacSHA256");
        m.init(key);
        return m;
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("HmacSHA256 unavailable", e);
      }
    });
  }

  public String hash(String address) {
    byte[] digest = mac.get().doFinal(address.getBytes(StandardCharsets.UTF_8));
    return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, 16));
  }
}
