"""Headless Debian Chromium driven by Playwright against pytest-django's live server.

The fixtures live here, imported once by tests/conftest.py, so every test that drives a
browser shares one Playwright (two in one thread clash)."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
# Playwright's own --disable-features list (chromiumSwitches.ts of the pinned version): Chromium
# keeps only the last --disable-features switch it is given, and ours comes after Playwright's,
# so it repeats that list (tests/unit/test_browser_flags.py checks it against the installed
# Playwright) and adds to it.
PLAYWRIGHT_DISABLED_FEATURES = [
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
]
# Each new context's window preloads its address bar's suggestion popups, two WebUI pages
# (chrome://omnibox-popup.top-chrome/) in a renderer of their own, that a headless test never
# opens: about 0.7 CPU-s of Chromium's for every context a test opens (0.5 in that renderer,
# 0.2 in the browser process), more than the page under test cost in most tests.
UNUSED_BROWSER_UI = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup"]
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-features=" + ",".join(PLAYWRIGHT_DISABLED_FEATURES + UNUSED_BROWSER_UI),
]
SCREENSHOTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "screenshots"

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
# between browser steps are still synchronous, so Django's async guard is relaxed here only.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: run `make test` (it installs Debian's chromium).")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    # Playwright's string predicates (wait_for_function) run by eval, which the site's
    # Content-Security-Policy forbids; tests/browser/test_content_security_policy.py drives the pages
    # under the policy itself, with a context of its own.
    context = browser.new_context(viewport={"width": 1100, "height": 900}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15000)
    _press_keys_once_loaded(page)
    yield page
    context.close()


@pytest.fixture
def quick_polls(settings):
    """The research pages that poll while something runs (a job's row, a recompute, an export, a
    study's progress) ask every 0.2 s instead of every 2 or 5: a test that follows a job waits
    for the job, not for the product's interval (the live server reads the same settings)."""
    settings.JOB_POLL_SECONDS = settings.PROGRESS_POLL_SECONDS = 0.2


def _press_keys_once_loaded(page) -> None:
    """Key presses wait for the page's load event. The keyboard shortcuts are deferred
    scripts: a test that waits for the new page's text can press a key before they have run
    on a busy machine, and the key is lost. (Playwright keeps one Keyboard per page.)"""
    keyboard = page.keyboard
    press = keyboard.press

    def press_when_loaded(key: str, **options) -> None:
        page.wait_for_load_state("load")
        press(key, **options)

    keyboard.press = press_when_loaded


@pytest.fixture
def screenshot(request):
    """``screenshot(name, target=page)``: the whole page as test-artifacts/screenshots/<name>.png.
    The ``page`` fixture is asked for only when no target is given: a test that shoots its
    own phone context alone opens no desktop one (a browser context and its page cost about
    0.3 s)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(name: str, target=None) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        _whole_page_png(target or request.getfixturevalue("page"), path)
        return path

    return take


# Made ready for a screenshot as Playwright's own are: finite animations jump to their end (a
# game sentence's fade-in, for one: no test waits for one to finish) and the text caret is
# hidden; then the page's whole size, measured as Playwright measures it.
_READY_FOR_A_SCREENSHOT = """() => {
  for (const animation of document.getAnimations()) {
    if (animation.effect && animation.effect.getComputedTiming().endTime !== Infinity) animation.finish();
  }
  const style = document.createElement("style");
  style.id = "screenshot-no-caret";
  style.textContent = "* { caret-color: transparent !important; }";
  document.head.appendChild(style);
  const boxes = [document.body, document.documentElement];
  return [
    Math.max(...boxes.flatMap((box) => [box.scrollWidth, box.offsetWidth, box.clientWidth])),
    Math.max(...boxes.flatMap((box) => [box.scrollHeight, box.offsetHeight, box.clientHeight])),
  ];
}"""


def _whole_page_png(page, path: Path) -> None:
    """The whole page, as Playwright's ``full_page`` screenshot takes it, but asked of Chromium
    directly with ``optimizeForSpeed``: the PNG is compressed less (files about a quarter
    larger, the same pixels), and a screenshot costs Chromium less than half the CPU it did
    (about 0.06 s less, for each of the suite's hundred-odd screenshots).

    It waits for the page's load event first: a click that follows a link returns once the
    next page has begun to arrive, and until its parser has made ``<head>`` and ``<body>``
    there is no page to measure (a busy machine once caught it there)."""
    page.wait_for_load_state("load")
    width, height = page.evaluate(_READY_FOR_A_SCREENSHOT)
    session = page.context.new_cdp_session(page)
    try:
        shot = session.send(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": not _fits_the_viewport(page, width, height),
                "optimizeForSpeed": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
            },
        )
    finally:
        session.detach()
        page.evaluate("() => document.getElementById('screenshot-no-caret').remove()")
    path.write_bytes(base64.b64decode(shot["data"]))


def _fits_the_viewport(page, width: int, height: int) -> bool:
    """Whether the whole page is what the viewport shows. Then Chromium captures the
    viewport as it is, the same pixels, without laying the page out again at the
    screenshot's size as ``captureBeyondViewport`` has it do (about 0.03 CPU-s of
    Chromium's a screenshot). The page's size is at least the viewport's (it is measured
    with the root's client size), so a page that fits is exactly the viewport and cannot
    have been scrolled."""
    viewport = page.viewport_size
    return viewport is not None and width <= viewport["width"] and height <= viewport["height"]


# How often a ``wait_for_function`` predicate is asked, in milliseconds. Playwright's default
# asks on every animation frame, which keeps Chromium drawing 60 frames a second for as long
# as the wait lasts (about 0.12 CPU-s per second waited); a wait for a poll, a job's row or a
# plot's image is over within a tenth of a second of it all the same.
POLL_MS = 100


def open_signed_in(page, live_server, user, path: str) -> None:
    """Open ``path`` signed in as ``user`` (a user or a username), by a session cookie that
    Django's test client makes with ``force_login``: for the tests whose subject is the page
    behind the login, not the login form (its page load, post and redirect each time)."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    if isinstance(user, str):
        user = get_user_model().objects.get(username=user)
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}]
    )
    page.goto(f"{live_server.url}{path}")


def plots_drawn(page) -> bool:
    """Every plot image of a dashboard loaded and decoded (scrolled to first: they load lazily)."""
    for image in page.locator(".plots img").all():
        image.scroll_into_view_if_needed()
    page.wait_for_function(
        "Array.from(document.querySelectorAll('.plots img')).every(img => img.complete)", polling=POLL_MS
    )
    return page.evaluate(
        "Array.from(document.querySelectorAll('.plots img'))"
        ".every(img => img.complete && img.naturalWidth > 0)"
    )
