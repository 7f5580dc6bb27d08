"""A researcher reads how each model rater compares with the humans: the rater table with
its verdicts (the random rater marked not calibrated) and the plot of alpha per question."""

import pytest

from scoring.services import compute_study_reports
from tests.browser.test_dashboard import PASSWORD
from tests.browser_fixtures import open_signed_in
from tests.helpers.raters import ITEMS, QUESTIONS, rater_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_rater_table_marks_the_random_rater_and_the_plot_is_drawn(
    live_server, page, screenshot, django_user_model
):
    owner = django_user_model.objects.create_user("owner", password=PASSWORD, is_staff=True)
    study, _, raters = rater_study(owner=owner, items=ITEMS[:8])  # few: the page is this test's
    compute_study_reports(study)
    open_signed_in(page, live_server, owner, f"/research/s/{study.slug}/dashboard/")
    title = "Raters against the humans, per question"
    page.wait_for_selector(f"h2:has-text('{title}')")
    table = page.locator("section.report-table", has=page.locator("h2", has_text=title))
    lines = {line.locator("td").first.inner_text(): [] for line in table.locator("tbody tr").all()}
    assert set(lines) == {"humans", *(p.platform_worker_id for p in raters.values())}
    random_rows = table.locator("tbody tr", has_text=raters["random"].platform_worker_id)
    assert random_rows.count() == len(QUESTIONS)
    for index in range(len(QUESTIONS)):
        mark = random_rows.nth(index).locator("td.mark")
        assert mark.inner_text() == "not calibrated"
    faithful = table.locator("tbody tr", has_text=raters["faithful"].platform_worker_id)
    assert faithful.locator("td.mark").count() == 0 and "yes" in faithful.first.inner_text()
    plot = page.locator(".plots img[alt^='Alpha with the humans per question']")
    assert plot.count() == 1
    plot.scroll_into_view_if_needed()  # it loads lazily; the other plots are not this test's
    plot.evaluate("img => img.complete || new Promise(done => img.addEventListener('load', done))")
    assert plot.evaluate("img => img.complete && img.naturalWidth > 0")
    screenshot("dashboard-rater-table-and-plot")
