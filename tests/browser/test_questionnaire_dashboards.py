"""The three questionnaire examples' dashboards, as ``make run``'s demo shows them: each
study loaded from ``docs/examples/`` with its seeded answers (``docs/tools/demo_answers.py``)
and its reports computed, read by its owner in the browser. Screenshots
``dashboard-questionnaire-<name>.png`` (the issue's closing note shows them)."""

import json

import pytest

from tests.browser_fixtures import open_signed_in, plots_drawn
from tests.conftest import EXAMPLES
from workers.demo.studies import load_demo_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-test-password-42"
# Per example: a table its questions must fill (a figure, not only a heading).
EXPECTED = {
    "pairwise": "Pick questions: wins per pair of systems (two-sided tests)",
    "best-worst": "Pick questions: Bradley-Terry strengths and ranks per system",
    "errors": "Choice and multi questions: share of each option per system (95% CI)",
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_questionnaire_example_s_dashboard_shows_its_figures(
    name, live_server, page, screenshot, django_user_model
):
    owner = django_user_model.objects.create_user("owner", password=PASSWORD, is_staff=True)
    data = json.loads((EXAMPLES / f"questionnaire-{name}.json").read_text(encoding="utf-8"))
    demo = load_demo_study(data)
    assert demo.answers is not None and demo.answers.created > 0 and demo.reports
    demo.study.owner = owner
    demo.study.save(update_fields=["owner"])

    open_signed_in(page, live_server, owner, f"/research/s/{demo.study.slug}/dashboard/")
    page.wait_for_selector("text=Items complete")
    table = page.locator("section.report-table", has=page.locator("h2", has_text=EXPECTED[name]))
    assert table.locator("tbody tr").count() > 0
    assert plots_drawn(page) and page.locator(".empty-plot").count() == 0
    screenshot(f"dashboard-questionnaire-{name}")
