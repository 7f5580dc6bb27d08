"""Usability defect 19: the consent button was focused (Enter consented), there was no
"I do not agree", and the sticky button covered the worked example. In a phone and a desktop
browser nothing is focused, both choices are there, and the choice sits after the worked
example in the page's flow, covering nothing. (The refusal's own page is shown by
tests/integration/test_crowd_entry.py::test_consent_offers_an_explicit_no_and_nothing_is_focused.)"""

import pytest

from annotation.services.authoring.studies import load_study_file
from tests.helpers.crowd_ids import prolific_id

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
STICKY = """() => {
  for (let e = document.querySelector('#consent-agree'); e; e = e.parentElement) {
    const p = getComputedStyle(e).position;
    if (p === 'sticky' || p === 'fixed') return true;
  }
  return false;
}"""


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_consent_has_both_choices_focuses_none_and_covers_no_example(
    live_server, browser, example_study_file, device
):
    study = load_study_file(example_study_file("likert")).study
    context = browser.new_context(**(PHONE if device == "phone" else {}))
    page = context.new_page()
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id(device)}")
    page.wait_for_selector(".worked-examples")
    assert page.evaluate("document.activeElement.tagName") == "BODY"
    assert page.locator("#consent-decline").inner_text() == "I do not agree"
    assert not page.evaluate(STICKY)
    examples = page.locator(".worked-examples").bounding_box()
    choice = page.locator("#consent-agree").bounding_box()
    assert choice["y"] >= examples["y"] + examples["height"]
    context.close()
