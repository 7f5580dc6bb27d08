"""A whole session on the one-trip path (issue 43): with JavaScript, each answer's response
is the next page, swapped in by htmx with its address pushed into the history; by mouse and
by keyboard, with back, reload and a double click on the way."""

from __future__ import annotations

import pytest

from annotation.models import Response
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.helpers.crowd_ids import prolific_id

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _requests(page) -> list[tuple[str, str, str]]:
    """Every request the page makes from now on: (resource type, method, path)."""
    seen: list[tuple[str, str, str]] = []
    page.on("request", lambda r: seen.append((r.resource_type, r.method, r.url.split("/", 3)[3])))
    return seen


def _begin(page, live_server, who: str, pages: int = 3):
    study = load_study_file(
        claim_study_file(slug=f"trip-{who}", items=pages + 1, items_per_session=pages, annotations_per_item=1)
    ).study
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id(who)}&STUDY_ID=s&SESSION_ID=x")
    page.get_by_role("button", name="I agree").click()
    page.wait_for_selector("text=Page 1 of 3")
    return study


def test_a_session_by_mouse_answers_each_page_in_one_request(live_server, page):
    study = _begin(page, live_server, "mouse")
    seen = _requests(page)
    task_url = f"{live_server.url}/s/{study.slug}/task/"

    page.locator(".sentence").first.click()
    page.get_by_label("Supports").check()
    with page.expect_response(lambda r: r.request.method == "POST") as answered:
        page.get_by_role("button", name="Submit and continue").dblclick()  # a double click
    page.wait_for_selector("text=Page 2 of 3")
    assert page.url == task_url and "page 2" in page.title()
    # htmx keeps the open page's head: the answer's response is the title and the body's content
    assert answered.value.text().startswith("<title>") and "<head>" not in answered.value.text()
    # one POST, its response the next page: no redirect, no GET, no full page load
    posts = [s for s in seen if s[1] == "POST"]
    assert len(posts) == 1 and posts[0][0] in ("xhr", "fetch")
    assert not [s for s in seen if s[1] == "GET" and s[0] == "document"]
    assert not [s for s in seen if s[1] == "GET" and s[2].endswith("/task/")]
    assert Response.objects.filter(study=study).count() == 1

    reloaded = page.reload()  # the pushed address shows the same page, loaded whole
    page.wait_for_selector("text=Page 2 of 3")
    assert reloaded is not None and "<head>" in reloaded.text()
    page.go_back()  # back: where the participant is, not the page already answered
    page.wait_for_selector("text=Page 2 of 3")
    assert page.url == task_url

    for number in (2, 3):
        page.wait_for_selector(f"text=Page {number} of 3")
        page.locator(".sentence").first.click()
        page.get_by_label("Supports").check()
        page.get_by_role("button", name="Submit and continue").click()
    code = page.wait_for_selector("#completion-code")
    assert code.inner_text() == "DONE-123"
    assert page.url == f"{live_server.url}/s/{study.slug}/done/"
    assert Response.objects.filter(study=study).count() == 3
    assert Response.objects.filter(study=study).values("item").distinct().count() == 3


def test_a_session_by_keyboard_on_the_one_trip_path(live_server, page):
    study = _begin(page, live_server, "keys")
    seen = _requests(page)
    page.keyboard.press("1")  # "supports", without its evidence: refused, the errors swapped in
    page.keyboard.press("Enter")
    page.wait_for_selector(".errors")
    assert "Select the sentence" in page.inner_text(".errors") and "Page 1 of 3" in page.inner_text("main")
    for number in (1, 2, 3):
        page.wait_for_selector(f"text=Page {number} of 3")
        page.keyboard.press("a")  # the first sentence as evidence
        page.keyboard.press("1")
        page.keyboard.press("Enter")
    assert page.wait_for_selector("#completion-code").inner_text() == "DONE-123"
    assert [s for s in seen if s[0] == "document"] == []  # not one full page load
    assert len([s for s in seen if s[1] == "POST"]) == 4
    assert Response.objects.filter(study=study).count() == 3


def test_without_javascript_the_answer_is_posted_redirected_and_fetched(live_server, browser):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        study = _begin(page, live_server, "nojs")
        seen = _requests(page)
        page.locator(".sentence").first.click()
        page.get_by_label("Supports").check()
        page.get_by_role("button", name="Submit and continue").click()
        page.wait_for_selector("text=Page 2 of 3")
        assert ("document", "POST", f"s/{study.slug}/a/") == (
            seen[0][0],
            seen[0][1],
            seen[0][2][: len(f"s/{study.slug}/a/")],
        )
        assert Response.objects.filter(study=study).count() == 1
    finally:
        context.close()


def test_the_minimum_time_holds_the_one_trip_answer_back(live_server, page):
    study = load_study_file(
        claim_study_file(
            slug="trip-hold", items=3, items_per_session=2, min_seconds_per_page=60, hold_submit=True
        )
    ).study
    page.clock.install()  # the page's clock is the test's: the hold lasts until it moves on
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={prolific_id('hold')}")
    page.get_by_role("button", name="I agree").click()
    page.wait_for_selector("text=Page 1 of 2")
    seen = _requests(page)
    for number in (1, 2):  # the first page loaded whole, the second swapped in
        page.wait_for_selector(f"text=Page {number} of 2")
        page.wait_for_function("document.querySelector('[data-submit]').disabled", timeout=15000)
        page.keyboard.press("a")
        page.keyboard.press("1")
        page.keyboard.press("Enter")  # too early: no request leaves
        page.evaluate("() => fetch(location.href)")  # a request after it: an earlier one is seen first
        page.clock.fast_forward("01:01")
        page.wait_for_function("!document.querySelector('[data-submit]').disabled", timeout=15000)
        assert len([s for s in seen if s[1] == "POST"]) == number - 1
        page.keyboard.press("Enter")
    page.wait_for_selector("#completion-code")
    assert len([s for s in seen if s[1] == "POST"]) == 2
    assert Response.objects.filter(study=study).count() == 2
