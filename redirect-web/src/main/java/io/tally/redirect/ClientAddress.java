package io.tally.redirect;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Finds the address of the client behind a request, and whether what the request says of its client
 * can be believed. Only a connection from a trusted proxy ({@code TALLY_TRUSTED_PROXIES}: addresses
 * or CIDR blocks) may speak for a client: its {@code X-Forwarded-For} and its country header are
 * read, anyone else's are ignored, since anyone can send them. Addresses are returned in one
 * spelling ({@link IpLiteral#canonical}): Jetty writes an IPv6 peer as {@code [0:0:0:0:0:0:0:1]}, a
 * proxy as {@code ::1}.
 */
public final class ClientAddress {

  private final List<AddressBlock> trustedProxies;

  /**
   * @param trustedProxies addresses and CIDR blocks of the proxies in front of this service
   * @throws IllegalArgumentException when an entry is neither
   */
  public ClientAddress(Collection<String> trustedProxies) {
    this.trustedProxies = trustedProxies.stream().map(AddressBlock::parse).toList();
  }

  /** Whether {@code peer}, the address the connection comes from, is one of the trusted proxies. */
  public boolean isTrustedProxy(String peer) {
    for (AddressBlock block : trustedProxies) {
      if (block.contains(peer)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The client address: the peer itself unless the peer is a trusted proxy, then the right-most hop
   * of {@code X-Forwarded-For} that is not a trusted proxy (hops further left are client-supplied).
   *
   * @param forwardedFor every {@code X-Forwarded-For} line of the request, in order: a proxy may
   *     add a line of its own instead of extending the one it received, and both forms mean the
   *     same list
   */
  public String resolve(String peer, List<String> forwardedFor) {
    String client = IpLiteral.canonical(peer);
    if (forwardedFor.isEmpty() || !isTrustedProxy(peer)) {
      return client;
    }
    List<String> hops = new ArrayList<>();
    for (String line : forwardedFor) {
      for (String hop : line.split(",")) {
        hops.add(hop);
      }
    }
    for (int i = hops.size() - 1; i >= 0; i--) {
      String hop = IpLiteral.canonical(hops.get(i));
      if (!hop.isEmpty() && !isTrustedProxy(hop)) {
        return hop;
      }
    }
    return client;
  }
}
