"""Authenticity signals in Chromium (docs/authenticity.md): the consent page names them; an
answer typed into the text field is stored with its keystrokes and no strong sign, and a
pasted one (on the next page, swapped in by the one-trip answer) with its paste and the
signs ``pasted`` and ``untyped``. The bench (bench/authenticity.py) runs 200 of each."""

import pytest

from annotation.models import Response
from annotation.services.authoring.studies import load_study_file
from tests.helpers.clipboard import PASTE
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.questionnaire import questionnaire_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TYPED = "Fewer errors in reply B."  # 24 characters
PASTED = "Reply B is more fluent and coherent, and it avoids the factual slip of reply A."


def _answer_the_closed_questions(page) -> None:
    page.wait_for_load_state()  # the deferred scripts (the keys, the signals) have run
    for key in "t22":  # a tie; fluency 2; no mistake
        page.keyboard.press(key)


def test_typed_and_pasted_answers_are_stored_with_their_signals(live_server, page):
    study = load_study_file(questionnaire_file()).study
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('browser-signals')}")
    assert "how long the page was hidden" in page.inner_text("#authenticity-notice")
    page.get_by_role("button", name="I agree").click()
    page.wait_for_selector("text=Page 1 of 2")
    _answer_the_closed_questions(page)
    page.locator('textarea[name="q-why"]').click()
    page.keyboard.type(TYPED, delay=5)
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=Page 2 of 2")
    _answer_the_closed_questions(page)
    page.evaluate(PASTE, [PASTED])
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#completion-code")

    typed, pasted = Response.objects.order_by("id")
    assert typed.answer["why"] == TYPED and pasted.answer["why"] == PASTED
    field = typed.authenticity["fields"]["q-why"]
    assert field["chars"] == field["typed"] == len(TYPED) and field["keys"] >= len(TYPED)
    assert field["pastes"] == 0 and typed.authenticity["first_input_ms"] is not None
    assert typed.authenticity["signs"] == [] and not typed.strong_sign
    field = pasted.authenticity["fields"]["q-why"]
    assert (field["pastes"], field["pasted"], field["chars"]) == (1, len(PASTED), len(PASTED))
    assert field["keys"] < 5 and field["typed"] == len(PASTED)  # execCommand inserts as typing would
    assert pasted.authenticity["signs"] == ["pasted", "untyped"] and pasted.strong_sign
