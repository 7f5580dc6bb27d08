"""Participants complete a short study of each survey kind in headless Chromium, mostly by
keyboard, and reach the completion code; the simulation study starts with its
qualification exam (one failed attempt, then a pass). Screenshots of every page."""

import pytest

from annotation.models import ExamAttempt, Response
from annotation.services.authoring.studies import load_study_file
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.exams import GOLD, file_position

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def load(example_study_file, kind: str, **fields):
    data = example_study_file(kind)
    data.update(fields)
    return load_study_file(data).study


def enter(page, live_server, study, screenshot, name: str) -> None:
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('browser-' + name)}")
    page.wait_for_selector(".worked-examples")
    screenshot(f"{name}-consent")
    page.get_by_role("button", name="I agree").click()


def test_likert_by_keyboard(live_server, page, screenshot, example_study_file):
    study = load(example_study_file, "likert", items_per_session=2)
    enter(page, live_server, study, screenshot, "likert")
    page.wait_for_selector("text=Page 1 of 2")
    screenshot("likert-page")
    for key in "75":  # two statements by keyboard; the highlight moves on by itself
        page.keyboard.press(key)
    assert (
        page.locator(".likert-q.is-current legend").inner_text().startswith("Leaving all the facts out of it")
    )
    answers_sent = []  # every answer the browser posts from here on
    page.on("request", lambda request: answers_sent.append(request.url) if request.method == "POST" else None)
    page.get_by_role("button", name="Submit and continue").click()  # the browser asks for the rest
    assert page.locator("form:invalid").count() == 1  # the browser's own check holds the form back
    for _ in range(7):
        page.keyboard.press("4")
    screenshot("likert-page-answered")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Page 2 of 2")
    # Settled: the second page is shown. Only the complete answer went out, and it is stored.
    assert len(answers_sent) == 1
    assert Response.objects.count() == 1
    for _ in range(9):
        page.keyboard.press("6")
    page.keyboard.press("Enter")
    assert page.wait_for_selector("#completion-code").inner_text() == "DEMO-LIKERT-4K8"
    screenshot("likert-done")
    first = Response.objects.order_by("id").first().answer["ratings"]
    assert (first["edit_main"], first["factual_main"], first["naturalness"]) == (7, 5, 4)


def test_ranking_by_letters(live_server, page, screenshot, example_study_file):
    study = load(example_study_file, "ranking", items_per_session=2)
    enter(page, live_server, study, screenshot, "ranking")
    page.wait_for_selector("text=Page 1 of 2")
    for key in "aab":  # MOST consistent A, LEAST consistent A (wrong on purpose), MOST fluent B
        page.keyboard.press(key)
    page.locator('label.letter-choice:has(input[name="fluency-least"][value="C"])').click()
    screenshot("ranking-page")
    page.keyboard.press("Enter")
    page.wait_for_selector(".errors")
    assert "MOST and LEAST must be different passages" in page.inner_text(".errors")
    screenshot("ranking-error")
    page.locator('label.letter-choice:has(input[name="consistency-least"][value="B"])').click()
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Page 2 of 2")
    for key in "1321":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    assert page.wait_for_selector("#completion-code").inner_text() == "DEMO-RANK-9P3"
    screenshot("ranking-done")
    for response in Response.objects.all():
        shown = response.display_order["shown"]
        assert response.answer["choices"]["consistency"]["most"] == shown[0]
    assert "ROME" not in page.content()


def test_simulation_with_a_qualification_exam(live_server, page, screenshot, example_study_file):
    load(example_study_file, "simulation-exam")
    study = load(example_study_file, "simulation", items_per_session=2)
    page.goto(f"{live_server.url}/s/{study.slug}/instructions/")
    checked = page.evaluate(
        "[...document.querySelectorAll('.worked-examples input:checked')].map(i => i.value)"
    )
    assert checked == ["no", "not_helpful"]  # each worked example keeps its own answer marked
    screenshot("simulation-instructions")
    enter(page, live_server, study, screenshot, "simulation")
    page.wait_for_selector("text=Qualification quiz")
    screenshot("simulation-exam-question")
    for _ in range(3):
        page.keyboard.press("3")  # "no" every time: none of the three is right
        with page.expect_navigation():
            page.keyboard.press("Enter")
    page.wait_for_selector("text=Not quite yet")
    screenshot("simulation-exam-failed")
    page.get_by_role("button", name="Try again").click()
    page.wait_for_selector("text=attempt 2 of 2")
    keys = {"not_helpful": "1", "yes": "2", "no": "3"}
    for _ in range(3):  # the gold answers, in the attempt's own order of the questions
        position = file_position(page.get_attribute("form[action*='/exam/a/']", "action"))
        page.keyboard.press(keys[GOLD[position]])
        with page.expect_navigation():
            page.keyboard.press("Enter")
    page.wait_for_selector("text=You passed")
    screenshot("simulation-exam-passed")
    page.get_by_role("link", name="Continue to the study").click()
    for number in (1, 2):
        page.wait_for_selector(f"text=Page {number} of 2")
        if number == 1:
            screenshot("simulation-page")
        page.keyboard.press("2")
        page.keyboard.press("Enter")
    assert page.wait_for_selector("#completion-code").inner_text() == "DEMO-SIM-2H6"
    screenshot("simulation-done")
    assert list(ExamAttempt.objects.values_list("status", flat=True)) == ["failed", "passed"]
    assert Response.objects.filter(study=study).count() == 2


def test_plausibility_by_keyboard(live_server, page, screenshot, example_study_file):
    study = load(example_study_file, "plausibility", items_per_session=2)
    enter(page, live_server, study, screenshot, "plausibility")
    for number in (1, 2):
        page.wait_for_selector(f"text=Page {number} of 2")
        for key in "123":
            page.keyboard.press(key)
        if number == 1:
            screenshot("plausibility-page")
        page.keyboard.press("Enter")
    assert page.wait_for_selector("#completion-code").inner_text() == "DEMO-PLAUS-3W7"
    screenshot("plausibility-done")
    for response in Response.objects.all():
        ratings = response.answer["ratings"]
        assert [ratings[key] for key in response.display_order["order"]] == ["yes", "moderate", "no"]


@pytest.mark.parametrize("kind", ["likert", "ranking", "simulation-pairwise", "plausibility"])
def test_phone_layout_needs_no_sideways_scrolling(live_server, browser, screenshot, example_study_file, kind):
    study = load(example_study_file, kind)
    context = browser.new_context(viewport={"width": 380, "height": 800}, is_mobile=True, has_touch=True)
    phone = context.new_page()
    phone.goto(f"{live_server.url}/s/{study.slug}/")
    screenshot(f"{kind}-phone-consent", phone)
    phone.get_by_role("button", name="I agree").click()
    phone.wait_for_selector("#task-form")
    screenshot(f"{kind}-phone-page", phone)
    widths = phone.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    context.close()
    assert widths[0] <= widths[1]
