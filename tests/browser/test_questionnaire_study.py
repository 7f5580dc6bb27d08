"""A questionnaire study in headless Chromium, by keyboard where the page has keys: a
question shown only for some answers appears and disappears, the server's error names the
question, and the stored answers name passages by id. Screenshots of the pages."""

import json

import pytest
from playwright.sync_api import expect

from annotation.models import Participant, Response
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.authoring.studies import load_study_file
from tests.browser_fixtures import open_signed_in
from tests.conftest import EXAMPLES
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.questionnaire import questionnaire_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_questionnaire_by_keyboard(live_server, page, screenshot):
    study = load_study_file(questionnaire_file()).study
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('browser-quest')}")
    page.get_by_role("button", name="I agree").click()
    page.wait_for_selector("text=Page 1 of 2")
    page.wait_for_load_state()  # the deferred scripts (show_if, the keys) have run
    which = page.locator('fieldset[data-question="q-which"]')
    assert which.is_hidden()
    for key in "b41":  # better: B; fluency 4; a mistake: yes (opens "which kinds")
        page.keyboard.press(key)
    assert which.is_visible()
    page.locator('label.sentence:has(input[name="q-errors"][value="1"])').click()
    screenshot("questionnaire-page")
    page.keyboard.press("Enter")  # no kind of mistake chosen: the server names the question
    page.wait_for_selector(".errors")
    assert "“Which kinds of mistake?”: please answer this question." in page.inner_text(".errors")
    assert Response.objects.count() == 0
    screenshot("questionnaire-error")
    page.locator('label.choice:has(input[name="q-which"][value="facts"])').click()
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Page 2 of 2")
    page.wait_for_load_state()
    for key in "t22":  # a tie; fluency 2; no mistake (the multi stays hidden)
        page.keyboard.press(key)
    assert page.locator('fieldset[data-question="q-which"]').is_hidden()
    page.locator('textarea[name="q-why"]').fill("Both say hello.")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert page.wait_for_selector("#completion-code").inner_text() == "QUEST-DONE"
    first, second = Response.objects.order_by("id")
    order = first.display_order["order"]
    assert first.answer == {
        "better": order[1],
        "fluency": 4,
        "issue": "yes",
        "which": ["facts"],
        "errors": [1],
    }
    assert second.answer == {
        "better": "tie",
        "fluency": 2,
        "issue": "no",
        "errors": [],
        "why": "Both say hello.",
    }


def test_best_worst_example_by_keyboard_and_the_error_example_on_a_phone(live_server, page, screenshot):
    for name in ("questionnaire-best-worst", "questionnaire-errors"):
        load_study_file(json.loads((EXAMPLES / f"{name}.json").read_text()))
    page.goto(f"{live_server.url}/s/demo-quest-best-worst/?PROLIFIC_PID={prolific_id('browser-bw')}")
    page.get_by_role("button", name="I agree").click()
    page.wait_for_selector("text=Page 1 of 2")
    for key in "ad1":  # best A, worst D, faithful yes
        page.keyboard.press(key)
    screenshot("questionnaire-best-worst-page")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Page 2 of 2")
    response = Response.objects.get()
    order = response.display_order["order"]
    assert response.answer == {"summary": {"most": order[0], "least": order[3]}, "faithful": "yes"}

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/s/demo-quest-errors/instructions/")
    page.wait_for_selector(".worked-examples")
    screenshot("questionnaire-errors-instructions-phone")
    page.goto(f"{live_server.url}/s/demo-quest-errors/?PROLIFIC_PID={prolific_id('browser-err')}")
    page.get_by_role("button", name="I agree").click()
    page.wait_for_selector("text=Page 1 of 3")
    assert page.locator('fieldset[data-question="q-error_sentences"]').is_hidden()
    page.keyboard.press("1")  # yes: the sentences and the kinds of mistake appear
    assert page.locator('fieldset[data-question="q-error_sentences"]').is_visible()
    screenshot("questionnaire-errors-page-phone")


def test_the_adjudication_form_follows_show_if_too(live_server, page, screenshot, django_user_model):
    owner = django_user_model.objects.create_user("owner", password="a-long-test-password-42", is_staff=True)
    study = load_study_file(questionnaire_file(items=1), owner=owner).study
    lines = [
        json.dumps(
            {"participant": who, "item": "q0", "answer": {"better": pick, "fluency": 3, "issue": "no"}}
        )
        for who, pick in (("ann", "r0a"), ("bob", "r0b"))
    ]
    import_responses(study, lines, source=Participant.Source.LAB)
    item = study.items.get()
    open_signed_in(page, live_server, "owner", f"/research/s/{study.slug}/adjudication/{item.pk}/")
    which = page.locator('#adjudication-form fieldset[data-question="q-which"]')
    expect(which).to_be_hidden()
    page.locator('#adjudication-form label.choice:has(input[name="q-issue"][value="yes"])').click()
    expect(which).to_be_visible()
    screenshot("questionnaire-adjudication")
