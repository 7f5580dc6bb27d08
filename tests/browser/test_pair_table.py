"""The Likert dashboard's pair table in the browser: each pair of systems once, in the
direction of the positive difference, with its 95% interval, the two-sided Wilcoxon p and
the Holm-adjusted p. Screenshot ``dashboard-likert-pair-table.png`` (the issue's closing
note shows it)."""

import pytest

from scoring.models import Report
from scoring.services import compute_study_reports
from tests.browser_fixtures import open_signed_in
from tests.helpers.reports import clustered_likert_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_pair_table_shows_each_pair_once_with_its_interval_and_holm_p(
    live_server, page, screenshot, django_user_model
):
    owner = django_user_model.objects.create_user("owner", is_staff=True)
    study = clustered_likert_study(owner=owner)
    compute_study_reports(study)

    open_signed_in(page, live_server, owner, f"/research/s/{study.slug}/dashboard/")
    title = "Paired comparisons: difference in rating"
    table = page.locator("section.report-table", has=page.locator("h2", has_text=title))
    headers = table.locator("thead th").all_inner_texts()
    assert headers == [
        "question",
        "system",
        "over",
        "difference",
        "p",
        "p (Holm-adjusted)",
        "median difference",
        "pairs",
    ]
    rows = [row.locator("td").all_inner_texts() for row in table.locator("tbody tr").all()]
    assert sorted(frozenset((r[1], r[2])) for r in rows) == sorted(
        [frozenset("AB"), frozenset("AC"), frozenset("BC")]
    )
    a_over_b = Report.objects.get(
        study=study,
        population="all",
        metric="likert.difference",
        group={"question": "edit", "system": "A", "over": "B"},
    )
    shown = next(r for r in rows if (r[1], r[2]) == ("A", "B"))
    assert shown[3].startswith(f"{a_over_b.value:.3f} [{a_over_b.ci_low:.3f}, {a_over_b.ci_high:.3f}]")
    for row in rows:  # every shown difference is positive: the direction is the estimate's
        assert float(row[3].split(" ")[0]) >= 0
    table.scroll_into_view_if_needed()
    screenshot("dashboard-likert-pair-table")
