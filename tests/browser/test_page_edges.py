"""Page defects of the third usability review (U15–U20), in headless Chromium: submitting
from a text box by keyboard, answer targets and key hints on a phone, the done page without
a timed redirect, the dashboard's and participants page's wide tables at 1366 px (reachable
by keyboard, the page no wider than the window), and the game's tags readable at AA."""

from __future__ import annotations

import pytest

from annotation.models import Enrollment, Participant, Response
from annotation.services.authoring.studies import load_study_file
from scoring.services import compute_study_reports
from tests.browser_fixtures import open_signed_in
from tests.game_helpers import boundary_study_file
from tests.helpers.competence import competence_study
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.questionnaire import questionnaire_file
from tests.helpers.reports import likert_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOP = {"viewport": {"width": 1366, "height": 768}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
# A phone-sized window that does not say it is touched (a phone emulated by size only, as the
# review's was; a narrow desktop window): the size alone hides the key hints.
PHONE_SIZED = {"viewport": {"width": 390, "height": 844}}
TARGET = 44  # CSS px, WCAG 2.5.5's target size
ANSWER_TARGETS = ".point, .letter-choice, label.choice, .rating-option"


def start_questionnaire(page, live_server, slug: str, pid: str) -> None:
    page.goto(f"{live_server.url}/s/{slug}/?PROLIFIC_PID={prolific_id(pid)}")
    page.get_by_role("button", name="I agree").click()
    page.wait_for_selector("text=Page 1 of")
    page.wait_for_load_state()  # the deferred key scripts have run


def test_ctrl_enter_submits_from_a_text_box_where_enter_adds_a_line(live_server, page):
    study = load_study_file(questionnaire_file(slug="keys-text")).study
    start_questionnaire(page, live_server, study.slug, "keys-text")
    hint = page.inner_text(".keys-hint")
    assert "Ctrl + Enter" in hint and "⌘ + Enter" in hint
    for key in "b42":  # better: B; fluency 4; no mistake
        page.keyboard.press(key)
    page.locator('textarea[name="q-why"]').click()
    page.keyboard.type("It greets.")
    page.keyboard.press("Enter")  # a new line, as in any text box
    page.keyboard.type("And it is short.")
    assert page.locator("text=Page 1 of 2").count() == 1
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=Page 2 of 2")
    page.wait_for_load_state()
    for key in "a22":
        page.keyboard.press(key)
    page.locator('textarea[name="q-why"]').click()
    page.keyboard.type("Longer.")
    page.keyboard.press("Meta+Enter")  # ⌘ + Enter on a Mac
    page.wait_for_selector("#completion-code")
    first, second = Response.objects.filter(study=study).order_by("id")
    assert first.answer["why"].replace("\r\n", "\n") == "It greets.\nAnd it is short."  # a form sends CR LF
    assert second.answer["why"] == "Longer."


def answer_target_sizes(page) -> list[dict]:
    return page.eval_on_selector_all(
        ANSWER_TARGETS,
        """targets => targets.filter(t => t.offsetParent !== null).map(t => {
            const box = t.getBoundingClientRect();
            return {target: t.className + ' ' + t.innerText.trim(), width: box.width, height: box.height};
        })""",
    )


def shown_key_hints(page) -> list[str]:
    """The key hints a person can see: the hint line, and the keys on the buttons and answers."""
    return page.eval_on_selector_all(
        ".keys-hint, .button kbd, label kbd",
        "hints => hints.filter(h => h.getClientRects().length > 0).map(h => h.outerHTML)",
    )


@pytest.mark.parametrize("device", [PHONE, PHONE_SIZED], ids=["touch-phone", "phone-sized-window"])
def test_on_a_phone_no_key_hints_and_every_answer_target_is_44_px(live_server, browser, screenshot, device):
    study = load_study_file(questionnaire_file(slug="phone-targets")).study
    context = browser.new_context(**device)
    phone = context.new_page()
    start_questionnaire(phone, live_server, study.slug, "phone-targets")
    phone.locator('label.choice:has(input[name="q-issue"][value="yes"])').click()  # opens the multi
    sizes = answer_target_sizes(phone)
    assert len(sizes) >= 3 + 5 + 2 + 2  # A, B, tie; 5 points; yes, no; grammar, facts
    small = [s for s in sizes if s["width"] < TARGET or s["height"] < TARGET]
    assert small == [], small
    assert shown_key_hints(phone) == []
    assert "Enter" not in phone.get_by_role("button", name="Submit and continue").inner_text()
    screenshot(f"edges-phone-task-{'touch' if device is PHONE else 'narrow'}", phone)
    context.close()


@pytest.mark.parametrize("kind", ["likert", "ranking", "plausibility", "claim"])
def test_each_survey_kind_s_answer_targets_are_44_px_on_a_small_phone(
    live_server, browser, example_study_file, kind
):
    """At 360 px, the narrowest common phone: every answer target is 44 × 44 px, and a scale
    of up to seven points keeps its points on one row."""
    study = load_study_file(example_study_file(kind)).study
    context = browser.new_context(viewport={"width": 360, "height": 800}, is_mobile=True, has_touch=True)
    phone = context.new_page()
    phone.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('small-' + kind)}")
    phone.get_by_role("button", name="I agree").click()
    phone.wait_for_selector("#task-form")
    sizes = answer_target_sizes(phone)
    assert sizes and [s for s in sizes if s["width"] < TARGET or s["height"] < TARGET] == []
    rows_per_scale = phone.eval_on_selector_all(
        ".scale", "scales => scales.map(s => new Set([...s.children].map(p => p.offsetTop)).size)"
    )
    assert set(rows_per_scale) <= {1}
    assert phone.evaluate("document.documentElement.scrollWidth") <= 360
    context.close()


def test_the_prolific_done_page_waits_for_the_worker(live_server, page, screenshot):
    study = load_study_file(questionnaire_file(slug="done-wait", items_per_session=1)).study
    start_questionnaire(page, live_server, study.slug, "done-wait")
    for key in "a32":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_selector("#completion-code")
    assert page.locator('meta[http-equiv="refresh" i]').count() == 0
    back = page.locator("#return-link")
    assert back.is_visible() and back.get_attribute("href").endswith("cc=QUEST-DONE")
    screenshot("edges-done-prolific")


def test_the_dashboard_tables_are_reachable_by_keyboard_and_fit_at_1366(
    live_server, browser, screenshot, django_user_model
):
    owner = django_user_model.objects.create_user("owner", is_staff=True)
    study, _ = likert_study()
    study.owner = owner
    study.save()
    compute_study_reports(study)
    context = browser.new_context(**LAPTOP)
    page = context.new_page()
    open_signed_in(page, live_server, owner, f"/research/s/{study.slug}/dashboard/")
    page.wait_for_selector("text=Items complete")
    regions = page.locator(".report-table .scroll")
    assert regions.count() >= 2
    for index in range(regions.count()):
        region = regions.nth(index)
        assert region.get_attribute("tabindex") == "0" and region.get_attribute("role") == "region"
        assert region.get_attribute("aria-label")
    title = "Agreement over all questions"
    overall = page.locator("section.report-table", has=page.locator("h2", has_text=title)).locator(".scroll")
    assert overall.evaluate("region => region.scrollWidth <= region.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    page.locator(".population a").last.focus()
    for _ in range(40):  # Tab reaches the first table's region
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('scroll')"):
            break
    assert page.evaluate("document.activeElement.getAttribute('role')") == "region"
    screenshot("edges-dashboard-1366", page)
    context.close()


def test_the_participants_page_is_no_wider_than_the_window(
    live_server, browser, screenshot, django_user_model
):
    """Prolific's 24-character ids, the competence column and a flagged, excluded row: the
    page fits the window, the table scrolling in its own region where it cannot. At a
    laptop's width and a small one, each in a window of its own, on one study (its answers
    and reports are built once: the page changes nothing)."""
    owner = django_user_model.objects.create_user("owner", is_staff=True)
    study = competence_study(owner)
    for number, person in enumerate(Participant.objects.filter(enrollments__study=study)):
        person.source, person.platform_worker_id = "prolific", f"5f{number:022d}"
        person.save(update_fields=["source", "platform_worker_id"])
    Enrollment.objects.filter(study=study).update(flagged=True, excluded=True, accepted=True)
    for width in (1366, 1024):
        context = browser.new_context(viewport={"width": width, "height": 768})
        page = context.new_page()
        open_signed_in(page, live_server, owner, f"/research/s/{study.slug}/participants/")
        page.wait_for_selector("#participants")
        widths = page.evaluate("[document.documentElement.scrollWidth, document.body.scrollWidth]")
        assert max(widths) <= width, (width, widths)
        region = page.locator(".scroll:has(#participants)")
        assert region.get_attribute("tabindex") == "0" and region.get_attribute("role") == "region"
        assert region.get_attribute("aria-label") == "Participants"
        if width == 1366:  # a laptop's width: the whole table shows, nothing to scroll
            assert region.evaluate("region => region.scrollWidth <= region.clientWidth")
        screenshot(f"edges-participants-{width}", page)
        context.close()


# The contrast of a tag's text on its own background as a person sees it, the tag and its
# ancestors' opacity included (text and background fade together over the card), by WCAG's
# relative luminance.
TAG_CONTRAST = """tag => {
  const rgb = (text) => text.match(/[\\d.]+/g).map(Number).slice(0, 3);
  const luminance = (channels) => {
    const linear = channels.map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2];
  };
  let opacity = 1;
  for (let node = tag; node; node = node.parentElement) opacity *= Number(getComputedStyle(node).opacity);
  const card = rgb(getComputedStyle(tag.closest('.round') || document.body).backgroundColor);
  const over = (colour) => colour.map((v, i) => opacity * v + (1 - opacity) * card[i]);
  const text = luminance(over(rgb(getComputedStyle(tag).color)));
  const ground = luminance(over(rgb(getComputedStyle(tag).backgroundColor)));
  return (Math.max(text, ground) + 0.05) / (Math.min(text, ground) + 0.05);
}"""


def test_the_game_tags_read_at_aa_contrast_from_the_moment_they_appear(live_server, page, screenshot):
    load_study_file(boundary_study_file(slug="news", items=2))
    page.goto(f"{live_server.url}/play/")
    # Every animation held at its first frame (Chromium's clock for them stopped), as an
    # accessibility checker run while the sentence comes in sees the page.
    animations = page.context.new_cdp_session(page)
    animations.send("Animation.enable")
    animations.send("Animation.setPlaybackRate", {"playbackRate": 0})
    page.locator(".category-card", has_text="Game news").get_by_role("button", name="Play").click()
    tag = page.wait_for_selector("#passage .tag")
    assert tag.evaluate(TAG_CONTRAST) >= 4.5  # as the sentence appears
    animations.send("Animation.setPlaybackRate", {"playbackRate": 1})
    page.evaluate("document.getAnimations().forEach(a => a.finish())")
    assert tag.evaluate(TAG_CONTRAST) >= 4.5  # and at rest
    page.get_by_role("button", name="Next sentence — still human").click()
    page.wait_for_selector("#passage li:nth-child(2)")
    page.get_by_role("button", name="Sentence 2 is machine-written").click()
    page.fill("#reason", "The names change.")
    page.get_by_role("button", name="Show me the answer").click()
    page.wait_for_selector("#verdict")
    page.evaluate("document.getAnimations().forEach(a => { a.pause(); a.currentTime = 0; })")
    for each in page.query_selector_all(".tag"):
        assert each.evaluate(TAG_CONTRAST) >= 4.5, each.inner_text()
    screenshot("edges-game-round-tags")
