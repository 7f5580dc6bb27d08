"""The boundary game in headless Chromium on the demo's own studies: a guest plays rounds
to the end, sees the truth and the points, finds the leaderboard and the profile; the
pages fit a phone."""

import copy

import pytest

from annotation.models import Assignment, Response
from annotation.services.authoring.studies import load_study_file
from workers.demo.game import DEMO_STUDIES, demo_study_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def demo_study_files() -> list[dict]:
    """The demo's study files, generated once for the module: the generator is seeded, so
    each test would build the same files again, at about a CPU second apiece."""
    return [demo_study_file(spec) for spec in DEMO_STUDIES]


@pytest.fixture
def demo_game(demo_study_files):
    """The demo's studies in the database, as ``loaddemogame`` loads them."""
    for study_file in demo_study_files:
        load_study_file(copy.deepcopy(study_file))


def current_round() -> Assignment:
    return Assignment.objects.filter(status="assigned").select_related("item").latest("id")


def test_a_guest_plays_demo_rounds_to_the_reveal(live_server, page, screenshot, settings, demo_game):
    settings.LEADERBOARD_MIN_ROUNDS = 1
    settings.LEADERBOARD_MAX_EXACT_SHARE = 1.0  # two rounds: both may be exact guesses
    page.goto(f"{live_server.url}/play/")
    assert page.locator(".category-card").count() == 2
    assert "never what you paste" in page.inner_text("#authenticity-notice")
    screenshot("game-landing")
    page.locator(".category-card", has_text="News reports").get_by_role("button", name="Play").click()
    page.wait_for_selector("#passage li")
    assignment = current_round()
    sentences, boundary = assignment.item.payload["sentences"], assignment.item.payload["boundary"]
    assert page.locator("#machine-written").count() == 0  # the first sentence is given as human
    for shown in range(2, min(boundary, 9) + 2):
        page.keyboard.press("h")  # "Next sentence — still human"
        page.wait_for_selector(f"#passage li:nth-child({shown})")
    assert page.locator("#passage li").count() == min(boundary, 9) + 1
    hidden = sentences[min(boundary, 9) + 1 :]
    assert not any(sentence in page.content() for sentence in hidden)
    screenshot("game-round")
    if boundary < len(sentences):
        page.get_by_role("button", name=f"Sentence {boundary + 1} is machine-written").click()
        page.wait_for_selector("#reason")
        page.get_by_role("button", name="Show me the answer").click()
        assert page.locator("#reason:invalid").count() == 1  # the browser asks for the reason first
        page.fill("#reason", "It drifts to another town's news halfway through a thought.")
        page.get_by_label("Off topic").check()
    else:
        page.get_by_role("button", name="A person wrote all of it").click()
        page.wait_for_selector("#reason")
    screenshot("game-reason")
    page.get_by_role("button", name="Show me the answer").click()
    page.wait_for_selector("#verdict")
    assert page.inner_text("#round-points") == "+5"
    assert page.locator("#machine-part li").count() == len(sentences) - boundary
    assert all(sentence in page.content() for sentence in sentences)
    screenshot("game-result")
    assert Response.objects.get().points == 5
    assert "reason" in Response.objects.get().authenticity["fields"]  # the swapped-in form's signals

    page.keyboard.press("n")  # the next passage: call the second sentence machine-written
    page.wait_for_selector("#passage li")
    loads: list[str] = []  # a round's steps are fragments: no full page load (issue 43)
    page.on("request", lambda r: loads.append(r.url) if r.resource_type == "document" else None)
    page.keyboard.press("h")
    page.wait_for_selector("#passage li:nth-child(2)")
    page.keyboard.press("m")
    page.fill("#reason", "The second sentence changes the subject.")
    page.get_by_role("button", name="Show me the answer").click()
    page.wait_for_selector("#verdict")
    assert loads == []
    total = sum(r.points or 0 for r in Response.objects.all())
    assert page.inner_text("#total-points") == f"{total:g}"

    page.get_by_role("link", name="Leaderboard").first.click()
    page.wait_for_selector("#your-rank")
    assert "Guests play unranked" in page.inner_text("#your-rank")  # guests are not ranked
    page.locator("#your-rank").get_by_role("link", name="sign up").click()
    page.fill("#id_username", "keen-reader")
    page.fill("#id_password1", "a-long-password-9")
    page.fill("#id_password2", "a-long-password-9")
    page.get_by_role("button", name="Create my account").click()
    page.wait_for_url("**/play/profile/")
    page.get_by_role("link", name="Leaderboard").first.click()
    page.wait_for_selector("#your-rank")
    assert "#1" in page.inner_text("#your-rank")  # the account, with the guest's rounds
    screenshot("game-leaderboard")
    page.get_by_role("link", name="Profile").first.click()
    page.wait_for_selector(".points-chart")
    assert page.locator(".points-chart rect").count() == Response.objects.filter(points__isnull=False).count()
    screenshot("game-profile")


def test_the_round_and_the_leaderboard_fit_a_phone(live_server, browser, screenshot, demo_game):
    context = browser.new_context(viewport={"width": 380, "height": 760}, is_mobile=True)
    phone = context.new_page()
    phone.goto(f"{live_server.url}/play/")
    screenshot("game-landing-phone", phone)
    phone.locator(".category-card", has_text="Short stories").get_by_role("button", name="Play").click()
    for shown in range(2, 5):
        phone.get_by_role("button", name="Next sentence — still human").click()
        phone.wait_for_selector(f"#passage li:nth-child({shown})")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 380
    screenshot("game-round-phone", phone)
    phone.get_by_role("button", name="Sentence 4 is machine-written").click()
    phone.fill("#reason", "   ")  # blank to the server: it answers 400 and the form says why
    phone.get_by_role("button", name="Show me the answer").click()
    phone.wait_for_selector(".field-error")
    assert "gave the machine away" in phone.inner_text(".field-error")
    phone.fill("#reason", "The names change.")
    phone.get_by_role("button", name="Show me the answer").click()
    phone.wait_for_selector("#verdict")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 380
    screenshot("game-result-phone", phone)
    phone.goto(f"{live_server.url}/play/leaderboard/")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 380
    screenshot("game-leaderboard-phone", phone)
    context.close()
