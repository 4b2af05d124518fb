package io.tally.event;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Tests for {@link ClickEvent.Builder}: its defaults, a copy with changes, and the bounds. */
class ClickEventBuilderTest {

  private static final UUID ID = UUID.fromString("019ace00-0000-7000-8000-000000000001");

  @Test
  void fieldsNotSetAreThoseOfAClickWithoutThem() {
    ClickEvent click = ClickEvent.builder(ID, "abc", 1_764_410_400_000L).build();

    assertThat(click)
        .isEqualTo(
            new ClickEvent(
                ID,
                "abc",
                1_764_410_400_000L,
                "",
                ClickEvent.NO_RANGE_VISITOR,
                "",
                "",
                ClickEvent.UNKNOWN_COUNTRY,
                false,
                false,
                ClickEvent.Campaign.NONE,
                null));
  }

  @Test
  void aCopyDiffersOnlyInWhatWasChanged() {
    ClickEvent click =
        ClickEvent.builder(ID, "abc", 1_764_410_400_000L)
            .visitor("AAECAwQFBgcICQoLDA0ODw")
            .rangeVisitor(0xabcL)
            .userAgent(TestClicks.DESKTOP_BROWSER)
            .referrerDomain("news.example")
            .country("DE")
            .head(true)
            .burst(true)
            .campaign(new ClickEvent.Campaign("newsletter", "email", "spring-sale"))
            .build();

    ClickEvent copy = click.toBuilder().country("FR").build();

    assertThat(copy.country()).isEqualTo("FR");
    assertThat(copy.toBuilder().country("DE").build()).isEqualTo(click);
  }

  @Test
  void aCampaignValueIsRefusedWithBlankEndsOrPastItsBoundButNotEmpty() {
    ClickEvent.Builder builder = ClickEvent.builder(ID, "abc", 0);

    assertThat(builder.campaign(new ClickEvent.Campaign("", "email", "")).build().campaign())
        .isEqualTo(new ClickEvent.Campaign("", "email", ""));
    assertThatThrownBy(() -> builder.campaign(new ClickEvent.Campaign(" x", "", "")).build())
        .hasMessageStartingWith("utm_source ");
    assertThatThrownBy(
            () ->
                builder
                    .campaign(
                        new ClickEvent.Campaign(
                            "", "", "c".repeat(ClickFields.MAX_CAMPAIGN_VALUE + 1)))
                    .build())
        .hasMessageStartingWith("utm_campaign ");
    assertThat(ClickFields.campaignValue("  spring\u0000 sale  " + "x".repeat(200)))
        .hasSize(ClickFields.MAX_CAMPAIGN_VALUE)
        .startsWith("spring\uFFFD sale");
  }

  @Test
  void buildRefusesAFieldOutOfItsBoundNamingIt() {
    ClickEvent.Builder builder = ClickEvent.builder(ID, "abc", 0).referrerDomain("not a host name");

    assertThatThrownBy(builder::build)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("referrer_domain ");
  }
}
