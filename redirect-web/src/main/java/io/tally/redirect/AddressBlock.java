package io.tally.redirect;

import java.net.InetAddress;
import java.util.Optional;

/**
 * A block of IP addresses written as CIDR ({@code 10.0.0.0/8}, {@code fd00::/64}) or as one address
 * ({@code 10.0.0.1}, {@code ::1}), as {@code TALLY_TRUSTED_PROXIES} lists them. Literals only: a
 * host name would make each check a DNS query.
 *
 * @param network the block's first address
 * @param prefixLength how many leading bits an address shares with {@code network} to be in the
 *     block
 */
record AddressBlock(InetAddress network, int prefixLength) {

  /**
   * The block {@code text} names, or an {@link IllegalArgumentException} saying why it names none.
   */
  static AddressBlock parse(String text) {
    String trimmed = text.trim();
    int slash = trimmed.indexOf('/');
    String address = slash < 0 ? trimmed : trimmed.substring(0, slash);
    InetAddress network =
        IpLiteral.parse(address)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "'" + text + "' is not an IP address or a CIDR block"));
    int bits = network.getAddress().length * 8;
    int prefix = bits;
    if (slash >= 0) {
      String length = trimmed.substring(slash + 1);
      prefix = length.matches("[0-9]{1,3}") ? Integer.parseInt(length) : -1;
      if (prefix < 0 || prefix > bits) {
        throw new IllegalArgumentException("'" + text + "' has a prefix length outside 0.." + bits);
      }
    }
    return new AddressBlock(network, prefix);
  }

  /** Whether the address literal {@code text} (a peer or a forwarded hop) is in this block. */
  boolean contains(String text) {
    Optional<InetAddress> address = IpLiteral.parse(text.trim());
    return address.isPresent() && contains(address.get());
  }

  boolean contains(InetAddress address) {
    byte[] candidate = address.getAddress();
    byte[] prefix = network.getAddress();
    if (candidate.length != prefix.length) {
      return false;
    }
    int whole = prefixLength / 8;
    for (int i = 0; i < whole; i++) {
      if (candidate[i] != prefix[i]) {
        return false;
      }
    }
    int rest = prefixLength % 8;
    if (rest == 0) {
      return true;
    }
    int mask = 0xff << (8 - rest);
    return (candidate[whole] & mask) == (prefix[whole] & mask);
  }
}
