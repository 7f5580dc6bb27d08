"""Issue 39 in the browser: a study duplicated from its overview and shared by role (the
operator then sees the crowd side and none of the owner's edits, on a phone), and a
publish from the page against the Prolific stand-in with SITE_URL set: the page says
before Confirm when the link cannot be reached, then sends the public link."""

import pytest
from django.test import override_settings

from annotation.models import Study, StudyShare
from annotation.services.authoring.studies import load_study_file
from tests.browser_fixtures import open_signed_in
from tests.factories import researcher_user
from tests.helpers.fake_prolific import TOKEN, serve
from tests.helpers.questionnaire import questionnaire_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


def test_duplicate_then_share_by_role_desktop_and_phone(live_server, page, browser, screenshot):
    owner = researcher_user("olga", password="a-long-password-1")
    researcher_user("bob", password="a-long-password-2")
    load_study_file(questionnaire_file(slug="pilot", items=3), owner=owner)

    open_signed_in(page, live_server, owner, "/research/s/pilot/")
    page.locator("#duplicate-study").click()
    page.wait_for_selector("#builder-form")
    assert "from your study" in page.inner_text("h1")
    page.fill("#field-slug", "pilot-copy")
    page.select_option("#use-template-items", "yes")
    screenshot("duplicate-builder-form")
    page.get_by_role("button", name="Save the draft").click()
    page.wait_for_url(f"{live_server.url}/research/s/pilot-copy/")
    copy = Study.objects.get(slug="pilot-copy")
    assert (copy.status, copy.items.count(), copy.completion_code) == ("draft", 3, "")

    page.goto(f"{live_server.url}/research/s/pilot/")
    page.fill("#share-username", "bob")
    page.select_option("#share-role", "operator")
    page.locator("#share-submit").click()
    page.wait_for_selector("#shares")
    assert page.locator("#shares .share-role").inner_text() == "Operator"
    assert StudyShare.objects.get().role == "operator"
    screenshot("share-by-role-owner")

    phone = browser.new_context(**PHONE, bypass_csp=True)
    try:
        bobs = phone.new_page()
        open_signed_in(bobs, live_server, "bob", "/research/s/pilot/")
        bobs.wait_for_selector("#your-role")
        assert bobs.inner_text("#your-role") == "operator"
        assert bobs.locator("#platforms-link").count() == 1 and bobs.locator("#edit-in-builder").count() == 0
        assert bobs.locator("#share-form").count() == 0 and bobs.locator("#back-to-draft").count() == 0
        assert bobs.evaluate("document.documentElement.scrollWidth") <= 390
        screenshot("share-operator-phone", target=bobs)
    finally:
        phone.close()


def test_publish_on_prolific_from_the_page_with_site_url(live_server, page, browser, screenshot):
    owner = researcher_user("olga", password="a-long-password-1")
    load_study_file(questionnaire_file(slug="pilot", items=3), owner=owner)
    fake, server = serve()
    try:
        with override_settings(SITE_URL="http://127.0.0.1:8000"):
            open_signed_in(page, live_server, owner, "/research/s/pilot/platforms/")
            assert "127.0.0.1" in page.inner_text("#link-problem")
        with override_settings(
            PROLIFIC_API_URL=fake.url, PROLIFIC_API_TOKEN=TOKEN, SITE_URL="https://lab.example.org"
        ):
            page.goto(f"{live_server.url}/research/s/pilot/platforms/")
            assert page.locator("#link-problem").count() == 0
            assert "https://lab.example.org/s/pilot/" in page.inner_text("#publish-link")
            form = page.locator("#publish-prolific")
            form.locator("input[name=places]").fill("4")
            form.get_by_label("reward in £ per participant").fill("1.50")
            form.locator("input[name=minutes]").fill("10")
            screenshot("publish-form")
            form.get_by_role("button", name="Publish on Prolific…").click()
            page.wait_for_selector("#confirm-summary")
            assert page.inner_text("#total-cost") == "6.00"
            assert page.inner_text("#confirm-link").startswith("https://lab.example.org/s/pilot/")
            screenshot("publish-confirmation")

            phone = browser.new_context(**PHONE, bypass_csp=True)
            try:
                small = phone.new_page()
                open_signed_in(small, live_server, owner, "/research/s/pilot/platforms/")
                small.wait_for_selector("#publish-link")
                assert small.evaluate("document.documentElement.scrollWidth") <= 390
                screenshot("publish-form-phone", target=small)
            finally:
                phone.close()

            page.get_by_role("button", name="Confirm and send").click()
            page.wait_for_selector("#audit-log")
        [sent] = fake.studies.values()
        assert sent["external_study_url"].startswith("https://lab.example.org/s/pilot/?PROLIFIC_PID=")
        assert sent["reward"] == 150 and sent["total_available_places"] == 4
        assert "done" in page.locator("#platform-jobs").inner_text()
        screenshot("publish-audit-log")
    finally:
        server.shutdown()
        server.server_close()
