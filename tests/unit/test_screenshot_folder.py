"""Browser screenshots are written where the README says: the checkout's test-artifacts/."""

from pathlib import Path

from tests.browser_fixtures import SCREENSHOTS

ROOT = Path(__file__).resolve().parents[2]


def test_screenshots_land_in_the_checkouts_test_artifacts():
    assert SCREENSHOTS == ROOT / "test-artifacts" / "screenshots"
    assert (ROOT / "manage.py").is_file()
