package io.tally.redirect;

import java.util.Set;
import java.util.stream.Collectors;

/**
 * Finds the address of the client behind a request. {@code X-Forwarded-For} is believed only when the
 * connection comes from a configured trusted proxy; otherwise anyone could claim any address. Addresses
 * are compared and returned in one spelling ({@link IpLiteral#canonical}): Jetty writes an IPv6 peer as
 * {@code [0:0:0:0:0:0:0:1]}, a proxy list as {@code ::1}.
 */
public final class ClientAddress {

  private final Set<String> trustedProxies;

  public ClientAddress(Set<String> trustedProxies) {
    this.trustedProxies = trustedProxies.stream().map(IpLiteral::canonical).collect(Collectors.toUnmodifiableSet());
  }

  /**
   * The client address: the peer itself unless the peer is a trusted proxy, then the right-most entry
   * of {@code X-Forwarded-For} that is not a trusted proxy (entries further left are client-supplied).
   */
  public String resolve(String peer, String forwardedFor) {
    String client = IpLiteral.canonical(peer);
    if (forwardedFor == null || forwardedFor.isBlank() || !trustedProxies.contains(client)) {
      return client;
    }
    String[] hops = forwardedFor.split(",");
    for (int i = hops.length - 1; i >= 0; i--) {
      String hop = IpLiteral.canonical(hops[i]);
      if (!hop.isEmpty() && !trustedProxies.contains(hop)) {
        return hop;
      }
    }
    return client;
  }
}
