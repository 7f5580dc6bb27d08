"""Every participant page passes axe-core with no serious or critical violation, and every kind
of study can be completed by keyboard alone.

One test per kind and language: a participant goes from the consent page to the done page
with Tab, Shift+Tab, Space, Enter, the arrow keys and typing only (the site's own letter and
digit shortcuts are never pressed: this is the path of a person using a screen reader or a
switch), and the answer stored is the one given. In one kind the participant also opens the
Leave page from the top bar and comes back (every survey kind's page is the same task.html
around the kind's form). axe runs on every page met (consent, the task pages, the
qualification quiz's question, feedback and result pages, leave, done) at a desktop's and a
phone's size, and the whole finding is asserted at the end, so a failure lists every page's
violations at once (also written to test-artifacts/axe/<test>.json, by page)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from annotation.models import Enrollment, ExamAttempt, Response
from annotation.services.authoring.studies import load_study_file
from tests.game_helpers import boundary_study_file
from tests.helpers.axe import serious_violations
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.exams import GOLD, file_position

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "axe"
SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
LEAVE_LINK = 'header a[href$="/leave/"]'
TASK_LINK = 'main a.button[href$="/task/"]'  # "Keep going" on the Leave page, "Continue to the study"
# The element holding the focus, as much of it as the keyboard driver needs.
FOCUSED = r"""() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const group = el.type === "radio" && el.form
    ? [...el.form.querySelectorAll('input[type="radio"]')].filter((r) => r.name === el.name) : [];
  return {
    tag: el.tagName, type: el.type || "", name: el.name || "", id: el.id,
    text: (el.innerText || "").trim(), inForm: !!el.closest("#task-form, .reason-form"),
    groupAnswered: group.some((r) => r.checked), position: group.indexOf(el),
    described: (el.getAttribute("aria-describedby") || "").split(" ").filter(Boolean)
      .map((id) => document.getElementById(id)).filter((hint) => hint && hint.checkVisibility())
      .map((hint) => hint.textContent.replace(/\s+/g, " ").trim()).join(" "),
  };
}"""


# What a finger presses on a participant's page: buttons, links that look like buttons or sit in
# the top bar, and the labels that hold a choice. A link inside a sentence is not a target of
# its own (WCAG 2.5.5 exempts inline links), nor is anything hidden.
TARGETS = "button, a.button, .topbar a, label:has(input:not([type=hidden])), textarea, select"
SMALL_TARGETS = """([selector, least]) => [...document.querySelectorAll(selector)]
  .filter((el) => el.getClientRects().length > 0)
  .filter((el) => !el.closest("[hidden], fieldset:disabled, .preview-example"))
  .map((el) => [el, el.getBoundingClientRect()])
  .filter(([el, box]) => box.width < least || box.height < least)
  .map(([el, box]) => `target-size (44 px): ${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}`
    + `.${[...el.classList].join(".")} "${el.innerText.trim().slice(0, 40)}" is ${Math.round(box.width)}`
    + ` × ${Math.round(box.height)} px`)"""
TARGET_PX = 44


def small_targets(page) -> list[str]:
    """The targets under 44 × 44 CSS px on the page as it is now (WCAG 2.5.5's size)."""
    return page.evaluate(SMALL_TARGETS, [TARGETS, TARGET_PX])


class Audit:
    """axe on the page as it is, at each size; findings kept by page until ``assert_clean``."""

    def __init__(self, page, name: str):
        self.page, self.name, self.found = page, name, {}

    def __call__(self, label: str) -> None:
        for size, viewport in SIZES.items():
            if self.page.viewport_size != viewport:  # already so: a call to Chromium saved
                self.page.set_viewport_size(viewport)
            self.found[f"{label} · {size}"] = serious_violations(self.page)
        self.found[f"{label} · phone"] += small_targets(self.page)
        self.page.set_viewport_size(SIZES["desktop"])
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / f"{self.name}.json").write_text(json.dumps(self.found, indent=1, ensure_ascii=False))

    def assert_clean(self, *expected: str) -> None:
        for label in expected:  # every page the test means to check was checked
            assert f"{label} · phone" in self.found, (label, list(self.found))
        failing = {page: lines for page, lines in self.found.items() if lines}
        report = (f"{page}:\n  " + "\n  ".join(lines) for page, lines in failing.items())
        assert failing == {}, "\n".join(report)


def focused(page) -> dict | None:
    return page.evaluate(FOCUSED)


def tab_to(page, selector: str, *, back: bool = False, limit: int = 60) -> None:
    """Tab (Shift+Tab with ``back``) until the element matching ``selector`` has the focus."""
    for _ in range(limit):
        if page.evaluate("(s) => !!document.activeElement && document.activeElement.matches(s)", selector):
            return
        page.keyboard.press("Shift+Tab" if back else "Tab")
    raise AssertionError(f"the keyboard never reached {selector}")


def activate(page, selector: str) -> None:
    tab_to(page, selector)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def pick(page, position: int) -> None:
    """Choose the radio at ``position`` of the focused (unanswered) group: Space takes the
    first, the arrow keys move on and choose as they go."""
    if position == 0:
        page.keyboard.press("Space")
    for _ in range(position):
        page.keyboard.press("ArrowRight")


def answer_form_by_keyboard(page, choose=lambda number, field: number % 2 + 1) -> dict[str, str]:
    """Tab through the task form once, answering as a keyboard user does: each unanswered radio
    group gets the option ``choose(number, field)`` gives it (the second and third by turns),
    the first box of each set of check boxes is ticked, a text box gets two lines (Enter adds
    the second) and Ctrl+Enter sends the form from there; else Enter on the submit button.
    Returns the values chosen, by field name."""
    groups, chosen = 0, {}
    for _ in range(200):
        page.keyboard.press("Tab")
        element = focused(page)
        if element is None or not element["inForm"]:
            continue
        if element["type"] == "radio" and not element["groupAnswered"]:
            pick(page, choose(groups, element["name"]))
            chosen[element["name"]] = page.evaluate("document.activeElement.value")
            groups += 1
        elif element["type"] == "checkbox" and element["name"] not in chosen:
            page.keyboard.press("Space")
            chosen[element["name"]] = page.evaluate("document.activeElement.value")
        elif element["tag"] == "TEXTAREA":
            assert_says_ctrl_enter_sends(element["described"])
            page.keyboard.type("First line.")
            page.keyboard.press("Enter")
            page.keyboard.type("Second line.")
            page.keyboard.press("Control+Enter")
            return chosen
        elif element["tag"] == "BUTTON" and element["type"] == "submit":
            page.keyboard.press("Enter")
            return chosen
    raise AssertionError("the keyboard never reached the submit button")


def assert_says_ctrl_enter_sends(hint: str) -> None:
    """A text box's visible description says what Enter and Ctrl + Enter do, in its language."""
    assert re.search(r"(Ctrl|Strg) \+ Enter .*(sends|sendet)", hint), hint


def load_study(example_study_file, kind: str, language: str, **fields):
    data = example_study_file(kind)
    data.update(
        slug=f"{data['slug']}-{language}",
        language=language,
        items_per_session=1,
        attention_check_rate=0,
        min_seconds_per_page=None,
        **fields,
    )
    data.pop("expected_seconds_per_page", None)
    return load_study_file(data).study


def consent_by_keyboard(page, live_server, study, audit, who: str) -> None:
    """The consent page (audited, unless ``audit`` is None: a test that sees a consent page
    another test audits), then Enter on "I agree"."""
    page.set_viewport_size(SIZES["desktop"])
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id(who)}&STUDY_ID=s&SESSION_ID=x")
    page.wait_for_selector("#consent-agree")
    if audit is not None:
        audit("consent")
    activate(page, "#consent-agree")


def leave_and_come_back(page, audit) -> None:
    """From a task page, Shift+Tab back to the Leave link, see the Leave page, and go on."""
    page.wait_for_load_state("load")
    tab_to(page, LEAVE_LINK, back=True)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    audit("leave")
    activate(page, TASK_LINK)


def finish(page, audit, study) -> Response:
    """The done page: the code, and a button back to Prolific that waits for the participant
    (no timed redirect, WCAG 2.2.1)."""
    page.wait_for_selector("#completion-code")
    assert page.locator("#return-link").is_visible()
    assert page.locator('meta[http-equiv="refresh" i]').count() == 0
    audit("done")
    assert Enrollment.objects.get(study=study).status == Enrollment.Status.COMPLETED
    return Response.objects.get(study=study)


SURVEY_KINDS = ["likert", "ranking", "claim", "plausibility", "questionnaire-errors"]
LANGUAGES = ["en", "de"]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("kind", SURVEY_KINDS)
def test_a_survey_kind_by_keyboard_alone_passes_axe(live_server, page, example_study_file, kind, language):
    study = load_study(example_study_file, kind, language)
    audit = Audit(page, f"{kind}-{language}")
    consent_by_keyboard(page, live_server, study, audit, f"axe-{kind}-{language}")
    page.wait_for_selector("#task-form")
    audit("task")
    if kind == SURVEY_KINDS[0]:  # every survey kind's page is task.html, its Leave link and page the same
        leave_and_come_back(page, audit)
        page.wait_for_selector("#task-form")
    chosen = answer_form_by_keyboard(page)
    response = finish(page, audit, study)
    audit.assert_clean("consent", "task", "done")
    assert_stored(kind, response, chosen)


def assert_stored(kind: str, response: Response, chosen: dict[str, str]) -> None:
    """The answer the keyboard gave (``chosen``: the form's values by field) is the answer stored."""
    answer = response.answer
    if kind in ("likert", "plausibility"):
        assert sorted(map(str, answer["ratings"].values())) == sorted(chosen.values())
    elif kind == "ranking":  # letters stand for the passages in the order they were shown
        shown = response.display_order["shown"]
        choices = answer["choices"].items()
        stored = {f"{c}-{end}": system for c, ends in choices for end, system in ends.items()}
        assert stored == {field: shown[ord(letter) - ord("A")] for field, letter in chosen.items()}
    elif kind == "claim":
        assert answer["evidence"] == [int(chosen["evidence"])] and answer["label"] == chosen["label"]
    elif kind == "questionnaire-errors":
        assert answer["has_errors"] == chosen["q-has_errors"]
        assert answer["comment"].replace("\r\n", "\n") == "First line.\nSecond line."


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_qualification_quiz_and_a_simulation_by_keyboard_alone_pass_axe(
    live_server, page, example_study_file, language
):
    """A failed attempt (its result page), a passed one and the simulation page after it."""
    exam = example_study_file("simulation-exam")
    exam.update(slug=f"exam-{language}", language=language)
    load_study_file(exam)
    study = load_study(example_study_file, "simulation", language, qualification=f"exam-{language}")
    audit = Audit(page, f"simulation-exam-{language}")
    consent_by_keyboard(page, live_server, study, audit, f"axe-sim-{language}")
    options = ["not_helpful", "yes", "no"]  # the exam's options, in the page's order
    for attempt in ("failed", "passed"):
        for number in range(3):
            page.wait_for_selector("form[action*='/exam/a/']")
            if number == 0:
                audit(f"quiz question ({attempt} attempt)")
            action = page.get_attribute("form[action*='/exam/a/']", "action")
            right = options.index(GOLD[file_position(action)])
            given = right if attempt == "passed" else 2  # "no" is right for none of the three
            answer_form_by_keyboard(page, lambda number, field, given=given: given)
            # the page after this question (read before it came, the old question was answered again)
            gone = "action => !document.querySelector(`form[action='${action}']`)"
            page.wait_for_function(gone, arg=action)
            page.wait_for_load_state("load")
            if page.locator("#exam-next").count():  # feedback after each question, where the quiz gives it
                audit("quiz feedback")
                activate(page, "#exam-next")
        page.wait_for_selector("#exam-score")
        audit(f"quiz result ({attempt})")
        if attempt == "failed":
            activate(page, "button[type=submit]")
    activate(page, TASK_LINK)
    page.wait_for_selector("#task-form")
    audit("task")
    chosen = answer_form_by_keyboard(page)
    response = finish(page, audit, study)
    audit.assert_clean("consent", "quiz question (failed attempt)", "quiz result (failed)", "task", "done")
    assert list(ExamAttempt.objects.values_list("status", flat=True)) == ["failed", "passed"]
    assert response.answer["choice"] == chosen["choice"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_boundary_round_by_keyboard_alone_passes_axe(live_server, page, language):
    """The game's round as a crowd study shows it: reveal with Enter, mark the sentence, write
    the reason in two lines and send it with Ctrl+Enter, go on to the done page."""
    fields = {"public": False, "language": language, "items": 1, "items_per_session": 1}
    study = load_study_file(boundary_study_file(slug=f"round-{language}", **fields)).study
    audit = Audit(page, f"boundary-{language}")
    consent_by_keyboard(page, live_server, study, audit, f"axe-round-{language}")
    page.wait_for_selector("#still-human")
    audit("round")
    tab_to(page, "#still-human")
    page.keyboard.press("Enter")
    page.wait_for_selector("#passage li:nth-child(2)")
    tab_to(page, "#machine-written")
    page.keyboard.press("Enter")
    page.wait_for_selector("#reason:focus")
    assert_says_ctrl_enter_sends(focused(page)["described"])
    audit("round: the reason")
    page.keyboard.type("The names change.")
    page.keyboard.press("Enter")
    page.keyboard.type("Then it repeats.")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#next-round")
    audit("round: the answer")
    tab_to(page, "#next-round")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    response = finish(page, audit, study)
    audit.assert_clean("consent", "round", "round: the reason", "round: the answer", "done")
    assert response.answer["guess"] == 1
    assert response.answer["reason"].replace("\r\n", "\n") == "The names change.\nThen it repeats."


def test_the_leave_page_after_leaving_passes_axe(live_server, page, example_study_file):
    """Leaving by keyboard: the Leave page's button, then the page that says it is done. The
    consent page on the way is the likert test's own, to its participant's id (its tables
    flushed since): that test audits it."""
    for language in LANGUAGES:
        study = load_study(example_study_file, "likert", language)
        audit = Audit(page, f"left-{language}")
        consent_by_keyboard(page, live_server, study, None, f"axe-likert-{language}")
        page.wait_for_selector("#task-form")
        tab_to(page, LEAVE_LINK, back=True)
        with page.expect_navigation():
            page.keyboard.press("Enter")
        activate(page, "form button[type=submit]")
        page.wait_for_selector("#left-study")
        audit("left")
        audit.assert_clean("left")
        assert Enrollment.objects.get(study=study).status == Enrollment.Status.RETURNED


@pytest.mark.django_db  # no database: the module's transaction, and its flush after, not needed
def test_the_axe_helper_reports_serious_violations_and_only_those(page):
    """The check can fail: a timed redirect (critical) and an image with no text (critical)
    are reported with what to fix and where; a page without a level-one heading (moderate)
    is not held against it."""
    page.set_content(
        '<html lang="en"><head><title>t</title><meta http-equiv="refresh" content="5;url=about:blank"></head>'
        '<body><main><p>Hello</p><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" id="logo"></main>'
        "</body></html>"
    )
    found = serious_violations(page)
    assert [line.split(" ")[0] for line in found] == ["image-alt", "meta-refresh"], found
    assert "#logo" in found[0] and "alt" in found[0]


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_the_public_game_by_keyboard_alone_passes_axe(live_server, browser, locale):
    """The open game: its landing page in the browser's language, a round played from it by
    keyboard (Play, then the round's buttons), the answer and the leaderboard."""
    language = locale[:2]
    load_study_file(boundary_study_file(slug=f"open-{language}", items=2, language=language))
    context = browser.new_context(locale=locale, viewport=SIZES["desktop"])
    page = context.new_page()
    page.set_default_timeout(15000)
    audit = Audit(page, f"game-{language}")
    page.goto(f"{live_server.url}/play/")
    page.wait_for_selector(".category-card")
    audit("game landing")
    activate(page, ".category-card button")
    page.wait_for_selector("#still-human")
    audit("game round")
    tab_to(page, "#still-human")
    page.keyboard.press("Enter")
    page.wait_for_selector("#passage li:nth-child(2)")
    tab_to(page, "#machine-written")
    page.keyboard.press("Enter")
    page.wait_for_selector("#reason:focus")
    page.keyboard.type("It forgets the dog.")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#next-round")
    audit("game answer")
    page.goto(f"{live_server.url}/play/leaderboard/")
    audit("leaderboard")
    context.close()
    audit.assert_clean("game landing", "game round", "game answer", "leaderboard")
    assert Response.objects.get().answer["guess"] == 1
