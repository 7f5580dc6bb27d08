"""The dashboard's Bradley-Terry table in the browser: strengths with intervals, rank
intervals and the position-bias line of a ranking study. Screenshot
``dashboard-bradley-terry.png`` (the table) for the issue's closing note."""

import pytest

from scoring.services import compute_study_reports
from tests.browser_fixtures import SCREENSHOTS, open_signed_in
from tests.helpers.bradley_terry import questionnaire_study, ranking_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-test-password-42"


def test_the_bradley_terry_table_shows_strengths_intervals_and_rank_intervals(
    live_server, page, django_user_model
):
    owner = django_user_model.objects.create_user("owner", password=PASSWORD, is_staff=True)
    study, _ = ranking_study(owner=owner)
    compute_study_reports(study)
    open_signed_in(page, live_server, owner, f"/research/s/{study.slug}/dashboard/")
    table = page.locator("section.report-table", has=page.locator("h2", has_text="Bradley-Terry strengths"))
    rows = table.locator("tbody tr")
    assert rows.count() == 6  # two criteria × three systems, strongest first
    first = rows.nth(0).inner_text()
    assert "rome" in first and "1 [1–1]" in first
    assert "[" in rows.nth(1).inner_text() and "–" in rows.nth(1).inner_text()
    bias = page.locator("section.report-table", has=page.locator("h2", has_text="Position bias"))
    assert bias.locator("tbody tr").count() == 2
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    table.screenshot(path=SCREENSHOTS / "dashboard-bradley-terry.png")
    bias.screenshot(path=SCREENSHOTS / "dashboard-position-bias.png")


def test_a_pick_question_s_table_shows_a_rank_range_where_the_data_cannot_order(
    live_server, page, django_user_model
):
    """The pairwise pick (``base`` and ``ft`` 0.6 apart, 30 items, every answer by its own
    participant: clustered by item): ``rome`` is surely first, the other two could be in
    either order."""
    owner = django_user_model.objects.create_user("owner", password=PASSWORD, is_staff=True)
    study, _ = questionnaire_study(owner=owner, crossed=False)
    compute_study_reports(study)
    open_signed_in(page, live_server, owner, f"/research/s/{study.slug}/dashboard/")
    table = page.locator("section.report-table", has=page.locator("h2", has_text="Bradley-Terry strengths"))
    cells = [row.inner_text() for row in table.locator("tbody tr").all()]
    assert "1 [1–1]" in cells[0] and "rome" in cells[0]
    assert "[2–3]" in cells[1] and "[2–3]" in cells[2]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    table.screenshot(path=SCREENSHOTS / "dashboard-bradley-terry-pick.png")
