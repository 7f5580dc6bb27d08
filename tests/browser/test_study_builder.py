"""The study builder in headless Chromium (issue 26), as a new researcher uses it: the first
example study (docs/examples/questionnaire-pairwise.json: a pairwise pick with a tie, a
5-point fluency scale, an optional reason) made on the form with its items from a CSV whose
columns are mapped on the page; its first page previewed; the draft edited; live; taken part
in as a test; the test answers discarded. Screenshots on a desktop (1280 wide) and a phone
(390 wide). The form steps are counted into test-artifacts/builder-steps.json (the time a
person needs is estimated from them in docs/builder.md)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from playwright.sync_api import expect

from annotation.models import Response, Study
from tests.browser_fixtures import SCREENSHOTS
from tests.conftest import EXAMPLES
from tests.factories import researcher_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "a-long-test-password-42"


def example_csv() -> str:
    """The example's items as a spreadsheet would hold them, in columns of its own naming."""
    example = json.loads((EXAMPLES / "questionnaire-pairwise.json").read_text())
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "request", "reply_1", "model_1", "reply_2", "model_2"])
    for item in example["items"]:
        first, second = item["payload"]["passages"]
        row = [item["external_id"], item["payload"]["context"], first["text"], first["system"]]
        writer.writerow([*row, second["text"], second["system"]])
    return out.getvalue()


class Steps:
    """The researcher's form actions on the way to the saved draft, counted."""

    def __init__(self, page):
        self.page, self.count = page, 0

    def fill(self, selector: str, value: str) -> None:
        self.count += 1
        self.page.fill(selector, value)

    def select(self, selector: str, value: str) -> None:
        self.count += 1
        self.page.select_option(selector, value)

    def click(self, target) -> None:
        self.count += 1
        (self.page.locator(target) if isinstance(target, str) else target).click()


def test_build_preview_edit_go_live_take_part_and_discard(live_server, page, screenshot, tmp_path):
    researcher_user("nora", password=PASSWORD)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/?next=/research/")
    page.fill("input[name=username]", "nora")
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name="Log in").click()

    steps = Steps(page)
    steps.click("#new-in-builder")
    screenshot("builder-templates")
    steps.click('[data-template="questionnaire-blank"]')
    steps.fill("#field-slug", "my-pairwise")
    steps.fill("#field-title", "Which reply is better?")
    steps.fill(
        "#field-instructions",
        "Each page shows a request and two replies, **A** and **B**. Pick the better one.",
    )

    blocks = page.locator("#question-list [data-question-block]")
    first = blocks.nth(0)  # the blank template's first question becomes the fluency scale
    for name, value in (("q_id", "fluency"), ("q_text", "How fluent is the reply you picked?")):
        steps.count += 1
        first.locator(f'[name="{name}"]').fill(value)
    steps.count += 1
    first.locator('[name="q_labels"]').fill("Hard to read\nReads like a careful writer")

    steps.click("#add-question")
    better = blocks.nth(1)
    steps.count += 5
    better.locator('[name="q_id"]').fill("better")
    better.locator('[name="q_type"]').select_option("pick")
    expect(better.locator('[name="q_points"]')).to_be_hidden()  # only the pick's fields
    better.locator('[name="q_pick"]').select_option("pairwise")
    better.locator('[name="q_tie"]').select_option("yes")
    better.locator('[name="q_text"]').fill("Which reply serves the request **better**?")
    steps.click(better.locator('[data-move="up"]'))
    expect(blocks.nth(0).locator('[name="q_id"]')).to_have_value("better")

    steps.click("#add-question")
    reason = blocks.nth(2)
    steps.count += 5
    reason.locator('[name="q_id"]').fill("reason")
    reason.locator('[name="q_type"]').select_option("text")
    reason.locator('[name="q_required"]').select_option("no")
    reason.locator('[name="q_max_length"]').fill("500")
    reason.locator('[name="q_text"]').fill("What decided it? One sentence is enough.")

    items = tmp_path / "replies.csv"
    items.write_text(example_csv())
    steps.count += 1
    page.set_input_files("#items-file", str(items))
    steps.click("#read-file")
    page.wait_for_selector("#column-map")
    roles = page.locator('#column-map select[name="col_role"]')
    passage_ids = page.locator('#column-map input[name="col_passage"]')
    for index, role, pid in ((1, "context", ""), (2, "passage_text", "a"), (3, "passage_system", "a")):
        steps.count += 1 + bool(pid)
        roles.nth(index).select_option(role)
        if pid:
            passage_ids.nth(index).fill(pid)
    for index, role in ((4, "passage_text"), (5, "passage_system")):
        steps.count += 2
        roles.nth(index).select_option(role)
        passage_ids.nth(index).fill("b")
    expect(page.locator("#kept-file")).to_contain_text("replies.csv")
    screenshot("builder-form-desktop")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot("builder-form-phone")
    page.set_viewport_size({"width": 1280, "height": 900})

    with page.context.expect_page() as opened:
        steps.click("#preview")
    preview = opened.value
    preview.wait_for_selector("#preview-page")
    expect(preview.locator("#preview-page")).to_contain_text("How long should I boil an egg")
    assert "assistant-small" not in preview.content()  # the systems stay hidden
    screenshot("builder-preview-desktop", preview)
    preview.set_viewport_size({"width": 390, "height": 844})
    screenshot("builder-preview-phone", preview)
    preview.close()

    steps.click("#save")
    page.wait_for_selector("#study-status")
    study = Study.objects.get(slug="my-pairwise")
    example = json.loads((EXAMPLES / "questionnaire-pairwise.json").read_text())
    assert study.config == {"questions": _normalised(example["config"]["questions"])}
    assert study.items.count() == 4
    (SCREENSHOTS.parent / "builder-steps.json").write_text(json.dumps({"form_steps": steps.count}) + "\n")

    # Edit the draft: settings only, the items stay.
    page.click("#edit-in-builder")
    page.click("#settings summary")
    page.fill("#setting-items_per_session", "2")
    page.fill("#setting-completion_code", "MY-PAIR-1")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot("builder-edit-phone")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.click("#save")
    page.wait_for_selector("#study-status")
    study.refresh_from_db()
    assert (study.items_per_session, study.completion_code, study.items.count()) == (2, "MY-PAIR-1", 4)

    page.get_by_role("button", name="Open (live)").click()
    expect(page.locator("#study-status")).to_have_text("Live")
    page.click("#edit-in-builder")
    expect(page.locator("#questions-frozen")).to_be_visible()
    assert page.locator('[name="q_id"]').count() == 0
    screenshot("builder-live-frozen-desktop")
    page.goto(f"{live_server.url}/research/s/my-pairwise/")

    page.get_by_role("link", name="Take part yourself").click()
    page.get_by_role("button", name="I agree").click()
    for number in (1, 2):
        page.wait_for_selector(f"text=Page {number} of 2")
        for key in "a4":  # reply A, fluency 4
            page.keyboard.press(key)
        page.keyboard.press("Enter")
    page.wait_for_selector("#completion-code")
    assert Response.objects.filter(study=study).count() == 2

    page.goto(f"{live_server.url}/research/s/my-pairwise/")
    page.click("#discard-test-answers")
    expect(page.locator("body")).to_contain_text("Discarded 2 test answers")
    assert Response.objects.filter(study=study).count() == 0
    screenshot("builder-overview-desktop")


def _normalised(questions: list[dict]) -> list[dict]:
    """The example's questions with the defaults the kind fills in."""
    from annotation.kinds.questions import check_questions

    return check_questions(questions)
