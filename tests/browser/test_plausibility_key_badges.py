"""Usability defect 20: on desktop the plausibility options lacked the 1/2/3 key badges the
other kinds show; on a touch screen every key hint stays hidden, these badges included."""

import pytest

from annotation.services.authoring.studies import load_study_file
from tests.helpers.crowd_ids import prolific_id

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
BADGES = "[...document.querySelectorAll('.explanation-rating')[0].querySelectorAll('.rating-option kbd')]"


def open_first_page(target, url: str) -> None:
    target.goto(url)
    target.get_by_role("button", name="I agree").click()
    target.wait_for_selector(".explanation-rating")


def test_plausibility_options_show_key_badges_on_desktop_only(live_server, browser, page, example_study_file):
    study = load_study_file(example_study_file("plausibility")).study
    open_first_page(page, f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('desk')}")
    assert page.evaluate(f"{BADGES}.map(k => k.innerText)") == ["1", "2", "3"]
    assert page.evaluate(f"{BADGES}.every(k => getComputedStyle(k).display !== 'none')")
    page.keyboard.press("2")  # the badge says what the key does
    assert page.evaluate("document.querySelector('.explanation-rating input:checked').value") == "moderate"

    context = browser.new_context(**PHONE)
    phone = context.new_page()
    open_first_page(phone, f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('phone')}")
    assert phone.evaluate(f"{BADGES}.every(k => getComputedStyle(k).display === 'none')")
    context.close()
