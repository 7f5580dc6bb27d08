"""A Prolific participant from the study link through consent, every page and the code (with
its copy button); the next one arrives when the study is full. Also the new researcher and
preview pages, on desktop and phone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from annotation.models import Participant, Response
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.factories import researcher_user
from tests.game_helpers import boundary_study_file
from tests.helpers.crowd_ids import mturk_id, prolific_id
from tests.helpers.exams import file_position

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Extra copies for the closing note (CROWD_SHOTS=/some/dir).
SHOTS = os.environ.get("CROWD_SHOTS", "")
EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
EXAM_GOLD = ["yes", "not_helpful", "yes"]
EXAM_ANSWERS = ["yes", "no", "yes"]  # by file position; 2 of 3: a pass, one "Not quite" on the way
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


@pytest.fixture
def shoot(screenshot):
    def take(name: str, target=None) -> None:
        path = screenshot(name, target)
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            (Path(SHOTS) / path.name).write_bytes(path.read_bytes())

    return take


def training_exam() -> None:
    """The sample exam (3 questions, 2 to pass) as a training quiz with explanations."""
    exam = json.loads((EXAMPLES / "simulation-exam.json").read_text())
    exam["exam"]["training"] = True
    for number, item in enumerate(exam["items"], start=1):
        item["explanation"] = f"Question {number}: go only by what the AI said before."
    load_study_file(exam)


def test_a_prolific_participant_finishes_and_the_next_finds_the_study_full(live_server, browser, page, shoot):
    training_exam()
    study = load_study_file(
        claim_study_file(
            items=2, items_per_session=2, annotations_per_item=1, qualification="demo-simulation-exam"
        )
    ).study
    link = f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('first')}&STUDY_ID=s&SESSION_ID=x"
    page.goto(link)
    shoot("crowd-consent-desktop")
    assert page.evaluate("document.activeElement.tagName") == "BODY"  # nothing consents on Enter
    page.get_by_role("button", name="I agree").click()
    for number in (1, 2, 3):
        page.wait_for_selector(f"text=Question {number} of 3")
        position = file_position(page.get_attribute("form[action*='/exam/a/']", "action"))
        choice = EXAM_ANSWERS[position]  # the attempt asks the items in its own order
        page.check(f'input[name="choice"][value="{choice}"]')
        page.get_by_role("button", name="Submit and continue").click()
        verdict = page.wait_for_selector("#exam-verdict")
        assert verdict.inner_text() == ("Right" if choice == EXAM_GOLD[position] else "Not quite")
        assert f"Question {position + 1}: go only by" in page.inner_text("#exam-explanation")
        if number == 2:
            shoot("crowd-exam-feedback-desktop")
        page.click("#exam-next")
    page.wait_for_selector("#exam-score")
    page.get_by_role("link", name="Continue to the study").click()
    for number in (1, 2):
        page.wait_for_selector(f"text=Page {number} of 2")
        page.locator(".sentence").first.click()
        page.keyboard.press("1")
        page.get_by_role("button", name="Submit and continue").click()
    code = page.wait_for_selector("#completion-code")
    assert code.inner_text() == "DONE-123"
    assert page.locator("#copy-code").is_visible()
    shoot("crowd-done-desktop")
    assert Response.objects.filter(study=study).count() == 2

    context = browser.new_context(**PHONE)
    phone = context.new_page()
    phone.goto(
        f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('second')}&STUDY_ID=s&SESSION_ID=y"
    )
    phone.wait_for_selector("#study-closed")  # full, so the last answer closed it
    assert "return this study on Prolific" in phone.inner_text("main")
    assert phone.locator("text=I agree").count() == 0
    shoot("crowd-closed-full-phone", phone)
    context.close()
    assert not Participant.objects.filter(platform_worker_id=prolific_id("second")).exists()


def test_a_full_study_and_a_declined_consent_on_the_phone(live_server, browser, shoot):
    study = load_study_file(
        claim_study_file(items=1, items_per_session=1, annotations_per_item=1, close_when_full=False)
    ).study
    context = browser.new_context(**PHONE)
    phone = context.new_page()
    phone.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('holder')}")
    shoot("crowd-consent-phone", phone)
    phone.get_by_role("button", name="I do not agree").click()
    phone.wait_for_selector("#consent-declined")
    shoot("crowd-declined-phone", phone)
    phone.click("#consent-again")
    phone.get_by_role("button", name="I agree").click()
    phone.wait_for_selector(".sentence")
    hint_shown = phone.evaluate(
        "getComputedStyle(document.querySelector('[data-submit] kbd')).display !== 'none'"
    )
    assert not hint_shown  # no Enter key hint on a touch screen
    late = context.new_page()
    late.context.clear_cookies()
    late.goto(f"{live_server.url}/s/{study.slug}/?workerId={mturk_id('W2')}&assignmentId=A2&hitId=H2")
    late.wait_for_selector("#study-full")
    assert "return this HIT on Mechanical Turk" in late.inner_text("main")
    shoot("crowd-full-mturk-phone", late)
    context.close()


def test_researcher_pages_and_the_game_preview(live_server, browser, page, shoot, django_user_model):
    owner = researcher_user("olga", password="pw-olga-123")
    study = load_study_file(claim_study_file(items=2, items_per_session=1), owner=owner).study
    load_study_file(claim_study_file(slug="other-claims", items=1), owner=owner)
    game = load_study_file(boundary_study_file(slug="paid-game", public=False)).study
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('PID-42')}")
    page.get_by_role("button", name="I agree").click()
    page.wait_for_selector(".sentence")

    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "olga")
    page.fill("#id_password", "pw-olga-123")
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live_server.url}/research/s/{study.slug}/")
    assert "{{%PROLIFIC_PID%}}" in page.input_value("#link-prolific")
    assert "other-claims" in page.inner_text("#shared-code-warning")
    shoot("crowd-overview-links-desktop")
    page.get_by_role("link", name="Preview every page").click()
    page.wait_for_selector("#researcher-preview")
    assert "supports" in page.inner_text("#preview-gold")
    shoot("crowd-researcher-preview-desktop")
    context = browser.new_context(**PHONE)
    context.add_cookies(page.context.cookies())
    phone_preview = context.new_page()
    phone_preview.goto(f"{live_server.url}/research/s/{study.slug}/preview/?page=2")
    phone_preview.wait_for_selector("#researcher-preview")
    shoot("crowd-researcher-preview-phone", phone_preview)
    context.close()
    page.goto(f"{live_server.url}/research/s/{study.slug}/participants/")
    assert prolific_id("PID-42") in page.inner_text("#participants")
    shoot("crowd-participants-desktop")
    page.get_by_role("link", name="Flag…").first.click()  # a block is an admin's act now
    page.wait_for_selector("#mark")
    shoot("crowd-flag-confirm-desktop")

    page.goto(f"{live_server.url}/s/{game.slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=h")
    page.wait_for_selector("#preview-notice")
    shoot("crowd-mturk-game-preview-desktop")
    page.goto(f"{live_server.url}/s/{study.slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=h")
    page.wait_for_selector("#preview-notice")
    shoot("crowd-mturk-claim-preview-desktop")
    context = browser.new_context(**PHONE)
    phone = context.new_page()
    phone.goto(f"{live_server.url}/s/{game.slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=h")
    phone.wait_for_selector("#preview-notice")
    shoot("crowd-mturk-game-preview-phone", phone)
    context.close()


def test_minimum_time_holds_the_submit_and_evidence_is_picked_by_keyboard(live_server, page, shoot):
    study = load_study_file(
        claim_study_file(
            items=1, items_per_session=1, annotations_per_item=1, min_seconds_per_page=60, hold_submit=True
        )
    ).study
    # The page's clock is the test's: the hold lasts until the test moves time on, however
    # slowly a busy machine renders the page.
    page.clock.install()
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('keys')}")
    page.get_by_role("button", name="I agree").click()
    page.wait_for_selector("text=Page 1 of 1")
    page.wait_for_load_state("load")  # the hold is set by a deferred script
    assert page.locator("[data-submit]").is_disabled()
    page.keyboard.press("b")  # the second sentence is evidence
    page.keyboard.press("1")  # supports
    page.keyboard.press("Enter")  # too early: nothing happens
    assert page.locator("text=Page 1 of 1").count() == 1
    assert page.is_checked('input[name="evidence"][value="1"]')
    shoot("crowd-min-time-desktop")
    page.clock.fast_forward("01:01")
    page.wait_for_function("!document.querySelector('[data-submit]').disabled", timeout=15000)
    page.keyboard.press("Enter")
    page.wait_for_selector("#completion-code")
    assert Response.objects.get(study=study).answer["evidence"] == [1]


def play_one_round(target) -> None:
    """Reveal the second sentence, mark it machine-written, give a reason, see the answer."""
    target.get_by_role("button", name="Next sentence — still human").click()
    target.wait_for_selector("#passage li:nth-child(2)")
    target.get_by_role("button", name="Sentence 2 is machine-written").click()
    target.fill("#reason", "The names change.")
    target.get_by_role("button", name="Show me the answer").click()
    target.wait_for_selector("#verdict")


def test_the_last_passage_of_a_category_ends_on_the_game_page(live_server, browser, page, shoot):
    load_study_file(boundary_study_file(slug="news", items=1))
    load_study_file(boundary_study_file(slug="stories", items=1, category="stories", title="Short stories"))
    phone = browser.new_context(**PHONE)
    for target, name in ((page, "desktop"), (phone.new_page(), "phone")):
        target.goto(f"{live_server.url}/play/")
        target.locator(".category-card", has_text="Game news").get_by_role("button", name="Play").click()
        play_one_round(target)
        target.goto(f"{live_server.url}/s/news/task/")
        target.wait_for_selector("#category-finished")
        assert "pages" not in target.inner_text("main")
        assert target.locator("#other-categories").get_by_role("button", name="Play").count() == 1
        shoot(f"crowd-game-category-finished-{name}", target)
        target.goto(f"{live_server.url}/play/")
        assert "All played" in target.inner_text(".category-card >> nth=0")
        shoot(f"crowd-game-landing-all-played-{name}", target)
        target.goto(f"{live_server.url}/play/profile/")
        target.wait_for_selector("#chart-x-label")
        shoot(f"crowd-game-profile-axes-{name}", target)
    phone.close()  # its page would otherwise live on, idle, until the session's browser closes
