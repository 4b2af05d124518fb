package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.event.ClickEvent.Campaign;
import io.tally.event.ClickFields;
import org.junit.jupiter.api.Test;

/** Tests for {@link ShortUrlQuery}: the merge into the target, and the campaign tags. */
class ShortUrlQueryTest {

  @Test
  void withoutAQueryTheTargetIsUnchanged() {
    assertThat(ShortUrlQuery.of(null).mergedInto("https://example.com/a?b=1#c"))
        .isEqualTo("https://example.com/a?b=1#c");
    assertThat(ShortUrlQuery.of("").mergedInto("https://example.com/a"))
        .isEqualTo("https://example.com/a");
  }

  @Test
  void theQueryFollowsTheTargetsOwnRetaggingItButChangingNoOtherParameter() {
    ShortUrlQuery query =
        ShortUrlQuery.of("utm_source=news&ref=a%20b&flag&next=https://evil.example");

    assertThat(query.mergedInto("https://example.com/p"))
        .isEqualTo(
            "https://example.com/p?utm_source=news&ref=a%20b&flag&next=https://evil.example");
    assertThat(query.mergedInto("https://example.com/p?id=7&utm_source=site&next=/home#top"))
        .as("the target's next stays its own; its campaign tag is the short URL's")
        .isEqualTo("https://example.com/p?id=7&next=/home&utm_source=news&ref=a%20b&flag#top");
    assertThat(ShortUrlQuery.of("a=1&&b=2&").mergedInto("https://example.com/?"))
        .as("empty parameters are dropped")
        .isEqualTo("https://example.com/?a=1&b=2");
  }

  @Test
  void whatAUrlMayNotHoldIsEncodedSoNoParameterCanLeaveTheQuery() {
    assertThat(
            ShortUrlQuery.of("q=\"<x> y\"&n=caf\u00e9&bad=%zz&ok=%41\r\nLocation: evil")
                .mergedInto("https://example.com/"))
        .isEqualTo(
            "https://example.com/?q=%22%3Cx%3E%20y%22&n=caf%C3%A9&bad=%25zz"
                + "&ok=%41%0D%0ALocation:%20evil")
        .doesNotContain("\r", "\n", " ", "#");
    assertThat(ShortUrlQuery.of("s=\ud800=x").mergedInto("https://example.com/"))
        .as("a lone surrogate is one character; the one after it stays as it was")
        .isEqualTo("https://example.com/?s=%3F=x");
    assertThat(ShortUrlQuery.of("h=a%23b#frag").mergedInto("https://example.com/#end"))
        .as("a # of the query cannot start a fragment")
        .isEqualTo("https://example.com/?h=a%23b%23frag#end");
  }

  @Test
  void aMergeLongerThanTheBoundIsNone() {
    String target = "https://example.com/" + "p".repeat(UrlPolicy.MAX_LENGTH - 20);
    ShortUrlQuery query = ShortUrlQuery.of("q=" + "x".repeat(ShortUrlQuery.MAX_LOCATION));

    assertThat(query.mergedInto(target)).isNull();
    assertThat(ShortUrlQuery.of("q=1").mergedInto(target)).endsWith("?q=1");
  }

  @Test
  void theCampaignIsTheShortUrlsTagsElseTheTargetsDecodedAndMadeFit() {
    String target = "https://example.com/?utm_source=site&utm_campaign=spring+sale#x";

    assertThat(ShortUrlQuery.of("utm_source=news%20letter&utm_medium=email").campaign(target))
        .isEqualTo(new Campaign("news letter", "email", "spring sale"));
    assertThat(ShortUrlQuery.of(null).campaign(target))
        .isEqualTo(new Campaign("site", "", "spring sale"));
    assertThat(ShortUrlQuery.of(null).campaign("https://example.com/")).isEqualTo(Campaign.NONE);
    assertThat(
            ShortUrlQuery.of("utm_source=%20%20" + "y".repeat(300) + "%00&utm_medium=%zz")
                .campaign("https://example.com/"))
        .satisfies(
            c -> {
              assertThat(c.source()).hasSize(ClickFields.MAX_CAMPAIGN_VALUE).startsWith("yyy");
              assertThat(c.medium()).isEqualTo("%zz");
            });
  }
}
