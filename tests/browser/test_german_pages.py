"""A study in German, in the browser: consent, a refused page, the code and its copy button
on a desktop; the pages, the held submit button's countdown, a ranking page and a game round
on a phone.
German words run longer than English ones: no page may scroll sideways."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.game_helpers import boundary_study_file
from tests.helpers.crowd_ids import prolific_id

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
# How far a page is wider than its window (0: nothing to scroll sideways).
OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


def german_claims(**fields):
    texts = {"title": "Behauptungen", "instructions": "Bitte lesen Sie genau."}
    return load_study_file(claim_study_file(language="de", **texts, **fields)).study


def test_a_german_study_on_a_desktop(live_server, page, screenshot):
    study = german_claims(items=2, items_per_session=2, annotations_per_item=1, expected_seconds_per_page=90)
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('anna')}&STUDY_ID=s&SESSION_ID=x")
    assert page.get_attribute("html", "lang") == "de"
    assert "2 Seiten, jeweils etwa 2 Minuten." in page.inner_text("#study-plan-length")
    assert "Bitte lesen Sie genau." in page.inner_text("main")  # the researcher's words, as written
    screenshot("i18n-de-consent-desktop")
    page.get_by_role("button", name="Ich bin einverstanden").click()

    page.wait_for_selector("text=Seite 1 von 2")
    page.check('input[name="label"][value="supports"]')
    page.get_by_role("button", name="Absenden und weiter").click()
    page.wait_for_selector(".errors")
    assert "Wählen Sie den Satz oder die Sätze" in page.inner_text(".errors")
    assert page.evaluate(OVERFLOW) == 0
    screenshot("i18n-de-task-error-desktop")
    for shown_next in ("text=Seite 2 von 2", "#completion-code"):  # each answer waits for the page it brings
        page.locator(".sentence").first.click()
        page.check('input[name="label"][value="supports"]')
        page.get_by_role("button", name="Absenden und weiter").click()
        page.wait_for_selector(shown_next)
    assert "Geschafft" in page.inner_text("h1")
    page.click("#copy-code")
    page.wait_for_selector("#copy-code[data-copied]")
    assert page.inner_text("#copy-code") == "Kopiert"
    assert page.evaluate(OVERFLOW) == 0
    screenshot("i18n-de-done-desktop")


def test_german_pages_and_a_german_game_round_on_a_phone(live_server, browser, screenshot):
    study = german_claims(items=2, items_per_session=2, hold_submit=True, min_seconds_per_page=600)
    game = load_study_file(boundary_study_file(slug="spiel", public=False, language="de")).study
    context = browser.new_context(**PHONE)
    phone = context.new_page()
    phone.set_default_timeout(15000)

    phone.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('ben')}&STUDY_ID=s&SESSION_ID=y")
    assert phone.evaluate(OVERFLOW) == 0
    # The consent question runs to two lines in German: inside its box (below the box's top
    # edge), not laid across the border (where it starts at the box's top edge).
    box, legend = (
        phone.locator(selector).bounding_box() for selector in (".consent-choice", ".consent-choice legend")
    )
    assert box and legend and legend["y"] > box["y"]
    screenshot("i18n-de-consent-phone", phone)
    phone.get_by_role("button", name="Ich bin einverstanden").click()
    wait = phone.wait_for_selector("[data-min-wait]")
    assert wait.inner_text().startswith("Sie können in ") and wait.inner_text().endswith(" s weitermachen.")
    assert phone.evaluate(OVERFLOW) == 0
    screenshot("i18n-de-task-phone", phone)

    ranking = json.loads((EXAMPLES / "ranking.json").read_text())
    load_study_file({**ranking, "slug": "rangfolge", "language": "de"})
    phone.goto(f"{live_server.url}/s/rangfolge/?PROLIFIC_PID={prolific_id('ben')}&STUDY_ID=r&SESSION_ID=r")
    phone.get_by_role("button", name="Ich bin einverstanden").click()
    phone.wait_for_selector(".rank-least .end-badge")
    assert phone.inner_text(".rank-least .end-badge") == "AM WENIGSTEN"
    assert phone.evaluate(OVERFLOW) == 0
    screenshot("i18n-de-ranking-phone", phone)

    phone.goto(f"{live_server.url}/s/{game.slug}/?PROLIFIC_PID={prolific_id('ben')}&STUDY_ID=g&SESSION_ID=z")
    phone.get_by_role("button", name="Ich bin einverstanden").click()
    phone.wait_for_selector("text=Mensch oder Maschine?")
    phone.click("#still-human")
    phone.wait_for_selector("#sentence-1")
    assert "Satz 2 ist maschinell geschrieben" in phone.inner_text("#machine-written")
    assert phone.evaluate(OVERFLOW) == 0
    screenshot("i18n-de-game-round-phone", phone)
    phone.click("#machine-written")
    phone.wait_for_selector("#reason")
    assert "Was hat sie verraten?" in phone.inner_text("#round-controls")
    phone.fill("#reason", "Der Satz wiederholt sich.")
    phone.click("#reveal-answer")
    phone.wait_for_selector("#verdict")
    assert phone.inner_text(".round-head .muted") == "Die Lösung"
    assert phone.evaluate(OVERFLOW) == 0
    screenshot("i18n-de-game-result-phone", phone)
    context.close()
