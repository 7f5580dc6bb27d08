"""The browser tests' --disable-features switch keeps every feature Playwright disables.

Chromium honours only the last --disable-features it is given, and the one in
tests/browser_fixtures.py comes after Playwright's own: a Playwright upgrade that adds to its
list would otherwise have the addition silently dropped. Read from the installed driver, no
browser started."""

import re
from pathlib import Path

import playwright

from tests.browser_fixtures import ARGS, PLAYWRIGHT_DISABLED_FEATURES

DRIVER_BUNDLE = Path(playwright.__file__).parent / "driver" / "package" / "lib" / "coreBundle.js"


def playwright_disabled_features() -> list[str]:
    """The names in the ``disabledFeatures = [...]`` array of Playwright's chromiumSwitches."""
    source = DRIVER_BUNDLE.read_text()
    array = re.search(r"disabledFeatures = \[(.*?)\]", source, re.DOTALL)
    assert array, f"no disabledFeatures array in {DRIVER_BUNDLE}"
    return re.findall(r'^\s*"([A-Za-z0-9]+)",?\s*$', array.group(1), re.MULTILINE)


def test_our_switch_repeats_playwrights_disabled_features():
    ours = [arg for arg in ARGS if arg.startswith("--disable-features=")]
    assert len(ours) == 1
    assert set(playwright_disabled_features()) <= set(ours[0].split("=", 1)[1].split(","))
    assert set(playwright_disabled_features()) == set(PLAYWRIGHT_DISABLED_FEATURES)
