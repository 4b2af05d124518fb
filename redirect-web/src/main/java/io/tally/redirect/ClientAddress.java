package io.tally.redirect;

import java.util.Set;

/**
 * Finds the address of the client behind a request. {@code X-Forwarded-For} is believed only when the
 * connection comes from a configured trusted proxy; otherwise anyone could claim any address.
 */
public final class ClientAddress {

  private final Set<String> trustedProxies;

  public ClientAddress(Set<String> trustedProxies) {
    this.trustedProxies = Set.copyOf(trustedProxies);
  }

  /**
   * The client address: the peer itself unless the peer is a trusted proxy, then the right-most entry
   * of {@code X-Forwarded-For} that is not a trusted proxy (entries further left are client-supplied).
   */
  public String resolve(String peer, String forwardedFor) {
    if (forwardedFor == null || forwardedFor.isBlank() || !trustedProxies.contains(peer)) {
      return peer;
    }
    String[] hops = forwardedFor.split(",");
    for (int i = hops.length - 1; i >= 0; i--) {
      String hop = hops[i].trim();
      if (!hop.isEmpty() && !trustedProxies.contains(hop)) {
        return hop;
      }
    }
    return peer;
  }
}
