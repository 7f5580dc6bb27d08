"""A researcher resolves a disagreement and reads the adjudicated population's figures."""

import pytest
from playwright.sync_api import expect

from annotation.models import Adjudication
from tests.browser_fixtures import open_signed_in
from tests.integration.test_adjudication import claim_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-test-password-42"


def test_adjudicate_a_disagreement_then_read_the_adjudicated_figures(
    live_server, page, screenshot, django_user_model, quick_polls
):
    owner = django_user_model.objects.create_user("owner", password=PASSWORD, is_staff=True)
    study = claim_study(owner=owner)
    open_signed_in(page, live_server, owner, f"/research/s/{study.slug}/")
    page.locator(".research-nav").get_by_role("link", name="Adjudication").click()
    expect(page.locator("#disagreements tbody tr")).to_have_count(1)  # waits for the page
    page.get_by_role("link", name="c1").click()
    expect(page.locator("#answers tbody tr")).to_have_count(2)
    page.get_by_text("The passage contradicts the claim").click()
    page.get_by_text("Two.").click()
    page.fill("textarea[name=note]", "The second sentence says the opposite.")
    screenshot("adjudication-item")
    page.get_by_role("button", name="Record the final answer").click()
    page.wait_for_selector("#adjudicated")
    assert Adjudication.objects.get().response.answer == {"label": "contradicts", "evidence": [1]}

    page.locator(".research-nav").get_by_role("link", name="Dashboard").click()
    page.get_by_role("button", name="Recompute").click()
    page.wait_for_selector("text=Items complete")
    page.get_by_role("link", name="Adjudicated").click()
    page.wait_for_selector('.population a[aria-current="page"]:has-text("Adjudicated")')
    shares = page.locator("section.report-table", has_text="Label shares per system (95% CI)").first
    row = shares.locator("tr", has_text="contradicts")
    assert "0.333" in row.inner_text()  # the adjudicated answer stands for c1: 1 of 3
    screenshot("dashboard-adjudicated")
