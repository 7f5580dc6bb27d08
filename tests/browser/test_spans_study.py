"""An error-span question in headless Chromium: a span selected by dragging the mouse,
one by the keyboard (arrows, Shift to extend, Enter to mark, which does not submit the
page), an overlap refused on the page, and on a phone a span by tapping its first and last
word. The stored offsets are the server's tokens' (an emoji before them counts as one
character). No serious axe finding; screenshots on desktop and phone."""

import pytest

from annotation.models import Response
from annotation.services.authoring.studies import load_study_file
from tests.helpers.axe import serious_violations
from tests.helpers.crowd_ids import prolific_id

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXT = "🙂 The dog runs fast across teh street, and it barks very loud at everyone."
STUDY = {
    "slug": "spans-browser",
    "title": "Error spans",
    "kind": "questionnaire",
    "status": "live",
    "items_per_session": 1,
    "completion_code": "SPANS-DONE",
    "config": {
        "questions": [
            {
                "id": "err",
                "type": "spans",
                "text": "Mark the errors of the translation.",
                "categories": ["accuracy", "fluency"],
                "score": True,
            }
        ]
    },
    "items": [
        {"external_id": f"i{n}", "payload": {"passages": [{"id": "t", "text": TEXT, "system": "s"}]}}
        for n in range(2)
    ],
}


def offsets(word: str) -> tuple[int, int]:
    start = TEXT.index(word)
    return start, start + len(word)


def word(page, text: str):
    return page.locator(".span-text .tok", has_text=text).first


def open_page(page, live_server, who: str) -> None:
    page.goto(f"{live_server.url}/s/spans-browser/?PROLIFIC_PID={prolific_id(who)}")
    page.get_by_role("button", name="I agree").click()
    page.wait_for_selector("[data-span-text]")
    page.wait_for_load_state()


def test_spans_by_mouse_keyboard_and_touch(live_server, browser, page, screenshot):
    load_study_file(STUDY)
    open_page(page, live_server, "spans-desktop")
    # mouse: press on "dog", drag to "fast"
    start, end = word(page, "dog").bounding_box(), word(page, "fast").bounding_box()
    page.mouse.move(start["x"] + 3, start["y"] + start["height"] / 2)
    page.mouse.down()
    page.mouse.move(end["x"] + 5, end["y"] + end["height"] / 2, steps=5)
    page.mouse.up()
    page.select_option("[data-span-category]", "accuracy")
    page.select_option("[data-span-severity]", "major")
    page.get_by_role("button", name="Mark the selection").click()
    # keyboard: into the text, Home (the first word, the emoji), → to the 7th word ("teh"),
    # Shift + → to "street", Enter
    page.select_option("[data-span-category]", "fluency")
    page.select_option("[data-span-severity]", "minor")
    page.locator("[data-span-text]").focus()
    page.keyboard.press("Home")
    for _ in range(6):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Enter")  # marks; does not submit
    # an overlapping span is refused on the page (the study does not allow overlaps)
    page.keyboard.press("Home")
    page.keyboard.press("Shift+End")
    page.keyboard.press("Enter")
    assert "may not overlap" in page.inner_text("[data-span-status]")
    assert page.locator(".span-list li").count() == 2 and Response.objects.count() == 0
    page.fill('input[name="q-err-score"]', "65")
    assert serious_violations(page) == []
    screenshot("spans-desktop")
    page.locator("[data-submit]").click()
    page.wait_for_selector("#completion-code")
    dog = (offsets("dog")[0], offsets("fast")[1])
    teh = (offsets("teh")[0], offsets("street")[1])
    assert Response.objects.get().answer == {
        "err": {
            "spans": [
                {"start": dog[0], "end": dog[1], "category": "accuracy", "severity": "major"},
                {"start": teh[0], "end": teh[1], "category": "fluency", "severity": "minor"},
            ],
            "score": 65,
        }
    }
    assert TEXT[teh[0] : teh[1]] == "teh street"

    # a phone: tap the first word, then the last
    phone = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True, bypass_csp=True
    )
    mobile = phone.new_page()
    mobile.set_default_timeout(15000)
    open_page(mobile, live_server, "spans-phone")
    word(mobile, "barks").tap()
    word(mobile, "loud").tap()
    mobile.get_by_role("button", name="Mark the selection").tap()
    mobile.fill('input[name="q-err-score"]', "80")
    assert serious_violations(mobile) == []
    screenshot("spans-phone", mobile)
    # (a click right after the whole-page screenshot of a page taller than the phone can land
    # while the viewport is being restored: the form is sent from its score field instead)
    mobile.locator('input[name="q-err-score"]').press("Enter")
    mobile.wait_for_selector("#completion-code")
    barks = (offsets("barks")[0], offsets("loud")[1])
    answer = Response.objects.order_by("id").last().answer
    assert answer == {
        "err": {
            "spans": [{"start": barks[0], "end": barks[1], "category": "accuracy", "severity": "minor"}],
            "score": 80,
        }
    }
    phone.close()
