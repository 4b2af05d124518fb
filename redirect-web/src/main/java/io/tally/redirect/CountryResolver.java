package io.tally.redirect;

import com.maxmind.db.CHMCache;
import com.maxmind.db.Reader;
import io.tally.event.ClickEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The client's country, from a trusted CDN header when the request carries one, otherwise from an
 * offline MaxMind-format database when one is configured, otherwise {@code unknown}. Both the
 * ip-location-db layout ({@code {"country_code": "JP"}}) and MaxMind's GeoIP2/GeoLite2 layout
 * ({@code {"country": {"iso_code": "JP"}}}) are read.
 */
public final class CountryResolver implements AutoCloseable {

  private static final Pattern ISO_CODE = Pattern.compile("[A-Za-z]{2}");

  private final Optional<Reader> database;

  private CountryResolver(Optional<Reader> database) {
    this.database = database;
  }

  /** A resolver with no database: the header or {@code unknown}. */
  public static CountryResolver headerOnly() {
    return new CountryResolver(Optional.empty());
  }

  /** A resolver backed by the MaxMind-format database at {@code path}. */
  public static CountryResolver withDatabase(Path path) {
    try {
      return new CountryResolver(Optional.of(new Reader(path.toFile(), new CHMCache())));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the country database " + path, e);
    }
  }

  /**
   * The country for a client address, given the value of the trusted country header (may be null).
   */
  public String country(String address, String headerValue) {
    if (headerValue != null && ISO_CODE.matcher(headerValue).matches()) {
      return headerValue.toUpperCase(Locale.ROOT);
    }
    if (database.isEmpty() || address == null) {
      return ClickEvent.UNKNOWN_COUNTRY;
    }
    Optional<InetAddress> literal = IpLiteral.parse(address);
    if (literal.isEmpty()) {
      return ClickEvent.UNKNOWN_COUNTRY;
    }
    try {
      InetAddress ip = literal.get();
      if (ip instanceof Inet6Address && database.get().getMetadata().getIpVersion() == 4) {
        // An IPv4-only tree would be walked past its depth and answer nonsense.
        return ClickEvent.UNKNOWN_COUNTRY;
      }
      @SuppressWarnings("unchecked")
      Map<String, Object> entry = database.get().get(ip, Map.class);
      return isoCode(entry).orElse(ClickEvent.UNKNOWN_COUNTRY);
    } catch (IOException | IllegalArgumentException e) {
      // An address the database cannot read.
      return ClickEvent.UNKNOWN_COUNTRY;
    }
  }

  private static Optional<String> isoCode(Map<String, Object> entry) {
    if (entry == null) {
      return Optional.empty();
    }
    Object code = entry.get("country_code");
    if (code == null && entry.get("country") instanceof Map<?, ?> country) {
      code = country.get("iso_code");
    }
    return code instanceof String s && ISO_CODE.matcher(s).matches()
        ? Optional.of(s.toUpperCase(Locale.ROOT))
        : Optional.empty();
  }

  @Override
  public void close() {
    database.ifPresent(
        reader -> {
          try {
            reader.close();
          } catch (IOException ignored) {
            // Closing a read-only memory map: nothing to recover.
          }
        });
  }
}
