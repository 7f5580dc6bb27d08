"""A question asked under each passage (``per: "passage"``), in headless Chromium at desktop
and phone size: the scale sits in each reply's card, keys answer A's then B's, the phone
page does not scroll sideways, and the answers are stored by passage id. Screenshots."""

import pytest

from annotation.models import Response
from annotation.services.authoring.studies import load_study_file
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.per_passage import SYSTEMS, per_passage_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_scale_under_each_passage_at_desktop_and_phone_size(live_server, page, screenshot):
    study = load_study_file(per_passage_file(items=2)).study
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('browser-per-passage')}")
    page.get_by_role("button", name="I agree").click()
    page.wait_for_selector("text=Page 1 of 2")
    page.wait_for_load_state()  # the deferred key script has run
    cards = page.locator("article.passage-card")
    assert cards.nth(0).locator('input[name="q-fluency-A"]').count() == 5
    assert cards.nth(1).locator('input[name="q-fluency-B"]').count() == 5
    assert "Passage B:" in cards.nth(1).inner_text()
    boxes = [cards.nth(n).bounding_box() for n in (0, 1)]
    assert boxes[0]["y"] == boxes[1]["y"] and boxes[0]["x"] < boxes[1]["x"]  # side by side
    for key in "52a":  # A's fluency 5, B's 2, then the pick: A
        page.keyboard.press(key)
    assert page.locator('input[name="q-fluency-A"][value="5"]').is_checked()
    assert page.locator('input[name="q-fluency-B"][value="2"]').is_checked()
    screenshot("per-passage-desktop")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Page 2 of 2")

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    page.wait_for_selector("text=Page 2 of 2")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    boxes = [page.locator("article.passage-card").nth(n).bounding_box() for n in (0, 1)]
    assert boxes[1]["y"] > boxes[0]["y"]  # stacked on a phone, each with its own scale
    page.locator('label.point:has(input[name="q-fluency-A"][value="1"])').click()
    page.locator('label.point:has(input[name="q-fluency-B"][value="4"])').click()
    page.locator('label.letter-choice:has(input[name="q-better"][value="B"])').click()
    screenshot("per-passage-phone")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_selector("#completion-code")

    first, second = Response.objects.order_by("id")
    a1, b1 = first.display_order["order"]
    assert first.answer == {"fluency": {a1: 5, b1: 2}, "better": a1}
    a2, b2 = second.display_order["order"]
    assert second.answer == {"fluency": {a2: 1, b2: 4}, "better": b2}
    assert second.display_order["systems"] == SYSTEMS
