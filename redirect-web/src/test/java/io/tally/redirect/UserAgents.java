package io.tally.redirect;

/**
 * Real user agents, copied from the clients that send them, shared by the classifier's tests and
 * the HTTP tests so both speak of the same clients.
 */
final class UserAgents {

  static final String CHROME_WINDOWS =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " Chrome/131.0.0.0 Safari/537.36";
  static final String CHROME_MAC =
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " Chrome/131.0.0.0 Safari/537.36";
  static final String CHROME_ANDROID_PIXEL =
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " Chrome/131.0.6778.81 Mobile Safari/537.36";
  static final String CHROME_ANDROID_SAMSUNG =
      "Mozilla/5.0 (Linux; Android 13; SM-S901B) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " Chrome/112.0.0.0 Mobile Safari/537.36";
  static final String CHROME_IPHONE =
      "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like"
          + " Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1";
  static final String FIREFOX_WINDOWS =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";
  static final String FIREFOX_LINUX =
      "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
  static final String FIREFOX_ANDROID =
      "Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0";
  static final String SAFARI_MAC =
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)"
          + " Version/18.1 Safari/605.1.15";
  static final String SAFARI_IPHONE =
      "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like"
          + " Gecko) Version/18.1 Mobile/15E148 Safari/604.1";
  static final String SAFARI_IPAD =
      "Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko)"
          + " Version/17.6 Mobile/15E148 Safari/604.1";
  static final String EDGE_WINDOWS =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0";

  /** A phone brand whose name ends in "bot": a person, not a crawler. */
  static final String CHROME_ANDROID_CUBOT =
      "Mozilla/5.0 (Linux; Android 12; Cubot Note 30) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " Chrome/120.0.0.0 Mobile Safari/537.36";

  static final String GOOGLEBOT =
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
  static final String GOOGLEBOT_SMARTPHONE =
      "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like"
          + " Gecko) Chrome/124.0.6367.155 Mobile Safari/537.36 (compatible; Googlebot/2.1;"
          + " +http://www.google.com/bot.html)";
  static final String BINGBOT =
      "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)";
  static final String BINGBOT_CHROME =
      "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0;"
          + " +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36";
  static final String FACEBOOK_EXTERNAL_HIT =
      "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)";
  static final String SLACKBOT_LINK_EXPANDING =
      "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)";
  static final String TWITTERBOT = "Twitterbot/1.0";
  static final String DISCORDBOT =
      "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)";
  static final String LINKEDINBOT =
      "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)";
  static final String WHATSAPP = "WhatsApp/2.23.20.0";
  static final String TELEGRAMBOT = "TelegramBot (like TwitterBot)";
  static final String YANDEXBOT =
      "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)";
  static final String HEADLESS_CHROME =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " HeadlessChrome/120.0.0.0 Safari/537.36";

  private UserAgents() {}
}
