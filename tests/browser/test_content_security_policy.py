"""Review finding 27 (adversarial review): every page carries a Content-Security-Policy that
allows no inline script, and our pages run under it without a single violation (headless
Chromium reports them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.helpers.crowd_ids import prolific_id

ROOT = Path(__file__).resolve().parents[2]
INLINE_HANDLER = re.compile(r"\son[a-z]+\s*=", re.IGNORECASE)
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.IGNORECASE)

COLLECT_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""

# Resolves at the first violation reported (at once if there is one), or after 5 s without one.
# (Evaluated as a function, which the policy allows; a string predicate would be an eval.)
FIRST_VIOLATION = """() => new Promise((resolve) => {
  if (window.__cspViolations.length) return resolve();
  document.addEventListener("securitypolicyviolation", () => setTimeout(resolve), {once: true});
  setTimeout(resolve, 5000);
})"""

# Two frames drawn and a task run after them: what the page did on loading, reported.
SETTLED = """() => new Promise((resolve) => {
  requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve)));
})"""


def settle(page) -> None:
    """What the page did on loading has run and any violation of it is reported: waited for
    as two drawn frames and a task, not as the 500 ms of quiet network Playwright's
    ``networkidle`` waits after each page (the pages' polls start seconds later)."""
    page.evaluate(SETTLED)


def test_our_templates_have_no_inline_script_or_event_handler():
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "templates").rglob("*.html"))
        if INLINE_SCRIPT.search(path.read_text()) or INLINE_HANDLER.search(path.read_text())
    ]
    assert offenders == []


@pytest.mark.django_db
def test_every_kind_of_page_sends_the_policy(client, django_user_model):
    study = load_study_file(claim_study_file(slug="csp-study")).study
    researcher = django_user_model.objects.create_user("res", password="pw-res-1", is_staff=True)
    pages = ["/", "/accounts/login/", "/play/", f"/s/{study.slug}/", "/api/docs/"]
    for url in pages:
        policy = client.get(url)["Content-Security-Policy"]
        assert (
            "script-src 'self'" in policy
            and "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
        )
        assert "frame-ancestors" in policy and "object-src 'none'" in policy, url
    client.force_login(researcher)
    for url in ["/research/", "/research/jobs/", f"/research/s/{study.slug}/"]:
        assert "script-src 'self'" in client.get(url)["Content-Security-Policy"], url


@pytest.fixture
def page_under_csp(browser):
    """A page that keeps the site's policy (the shared ``page`` fixture bypasses it)."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_main_pages_run_without_a_csp_violation(live_server, page_under_csp, django_user_model):
    page = page_under_csp
    study = load_study_file(claim_study_file(slug="csp-claims", items=3)).study
    django_user_model.objects.create_user("res", password="a-long-test-password", is_staff=True)
    page.add_init_script(COLLECT_VIOLATIONS)
    console_errors: list[str] = []
    page.on(
        "console", lambda message: console_errors.append(message.text) if message.type == "error" else None
    )

    def visit(url: str, drawn: str | None = None) -> None:
        page.goto(f"{live_server.url}{url}")  # returns once the page has loaded: its scripts ran
        if drawn:  # a page that fetches and draws after loading, drawn
            page.wait_for_selector(drawn)
        settle(page)
        assert page.evaluate("window.__cspViolations") == [], url

    visit("/")
    # the watch works: an injected inline script is blocked and reported
    page.evaluate(
        "document.body.appendChild(Object.assign(document.createElement('script'), {textContent: '1'}))"
    )
    page.evaluate(FIRST_VIOLATION)
    assert page.evaluate("window.__cspViolations.length") == 1
    console_errors.clear()
    for url in ["/play/", "/accounts/login/"]:
        visit(url)
    page.fill("input[name=username]", "res")
    page.fill("input[name=password]", "a-long-test-password")
    page.locator("form button[type=submit]").first.click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    for url in ["/research/", "/research/jobs/", f"/research/s/{study.slug}/"]:
        visit(url)
    visit("/api/docs/", drawn=".swagger-ui .info .title")  # Swagger UI fetches the schema, then draws
    visit("/research/builder/?template=questionnaire-blank")  # the builder's script runs under it
    page.click("#add-question")
    assert page.locator("#question-list [data-question-block]").count() == 2
    assert page.evaluate("window.__cspViolations") == []
    visit(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('csp-participant')}&STUDY_ID=s&SESSION_ID=x")
    consent = page.locator("form button[type=submit]").first
    if consent.count():
        with page.expect_navigation():  # to the first page, loaded
            consent.click()
        settle(page)
        assert page.evaluate("window.__cspViolations") == []
    # an answer on the one-trip path: htmx swaps the next page in and runs its scripts
    page.locator(".sentence").first.click()
    page.get_by_label("The passage supports the claim").check()
    page.get_by_role("button", name="Submit and continue").click()
    page.wait_for_selector("text=Page 2 of")
    settle(page)
    assert page.evaluate("window.__cspViolations") == []
    assert not [text for text in console_errors if "Content Security Policy" in text]
