"""A participant completes a claim study in headless Chromium and sees the completion code."""

import pytest

from annotation.models import Response
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.helpers.crowd_ids import prolific_id

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_participant_completes_a_claim_study(live_server, page, screenshot):
    study = load_study_file(claim_study_file(items=3, items_per_session=3, annotations_per_item=1)).study
    page.goto(
        f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('browser-1')}&STUDY_ID=s&SESSION_ID=x"
    )
    page.get_by_role("button", name="I agree").click()

    page.wait_for_selector("text=Page 1 of 3")
    page.keyboard.press("1")  # shortcut: "supports"
    page.keyboard.press("Enter")
    page.wait_for_selector(".errors")  # no evidence chosen: the server says which field
    assert "Select the sentence" in page.inner_text(".errors")
    screenshot("claim-error")

    for number in range(1, 4):
        page.wait_for_selector(f"text=Page {number} of 3")
        page.locator(".sentence").first.click()
        page.keyboard.press("1")
        if number == 1:
            screenshot("claim-page")
        page.get_by_role("button", name="Submit and continue").click()

    code = page.wait_for_selector("#completion-code")
    assert code.inner_text() == "DONE-123"
    screenshot("claim-done")
    assert Response.objects.filter(study=study).count() == 3


def test_phone_layout_is_readable(live_server, browser, screenshot):
    study = load_study_file(claim_study_file(items=1, items_per_session=1)).study
    context = browser.new_context(viewport={"width": 380, "height": 800}, is_mobile=True)
    phone = context.new_page()
    phone.goto(f"{live_server.url}/s/{study.slug}/")
    phone.get_by_role("button", name="I agree").click()
    phone.wait_for_selector(".sentence")
    width = phone.evaluate("document.documentElement.scrollWidth")
    screenshot("claim-phone", phone)
    context.close()
    assert width <= 380  # nothing forces sideways scrolling
