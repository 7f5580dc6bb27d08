"""A researcher opens a study's statistics, recomputes them and reads tables and plots."""

import pytest

from annotation.models import Job
from tests.browser_fixtures import open_signed_in, plots_drawn
from tests.factories import AnsweredResponseFactory
from tests.helpers.reports import game_study, likert_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-test-password-42"


def test_recompute_then_read_tables_and_plots(live_server, page, screenshot, django_user_model, quick_polls):
    owner = django_user_model.objects.create_user("owner", password=PASSWORD, is_staff=True)
    study = game_study(owner=owner)
    open_signed_in(page, live_server, owner, f"/research/s/{study.slug}/dashboard/")
    page.wait_for_selector("text=No reports yet")
    page.get_by_role("button", name="Recompute").click()
    page.wait_for_selector("text=Items complete")  # the page reloads once the job is done
    assert Job.objects.get().status == "done"
    assert "2 of 4" in page.inner_text(".progress-cards")
    assert page.locator("h2", has_text="The game at a glance").count() == 1
    assert plots_drawn(page) and page.locator(".plots img").count() == 4  # below the agreement tables
    screenshot("dashboard-roft")

    AnsweredResponseFactory.from_specs(
        study, [{"participant": "zed", "item": "A", "answer": {"guess": 3}, "points": 5}]
    )
    page.reload()
    assert "Out of date: 1 new responses" in page.inner_text(".computed")
    page.get_by_role("link", name="Without attention-check failures").click()
    page.wait_for_selector('.population a[aria-current="page"]:has-text("Without attention-check failures")')


def test_likert_dashboard_on_a_phone(live_server, browser, screenshot, django_user_model):
    from scoring.services import compute_study_reports

    owner = django_user_model.objects.create_user("owner", password=PASSWORD, is_staff=True)
    study, _ = likert_study()
    study.owner = owner
    study.save()
    compute_study_reports(study)
    context = browser.new_context(viewport={"width": 390, "height": 860}, is_mobile=True, bypass_csp=True)
    phone = context.new_page()
    open_signed_in(phone, live_server, owner, f"/research/s/{study.slug}/dashboard/")
    phone.wait_for_selector("text=Mean rating per question and system")
    assert plots_drawn(phone)
    for title in ("Agreement over all questions", "Cohen's kappa of each pair of annotators"):
        table = phone.locator("section.report-table", has=phone.locator("h2", has_text=title))
        assert table.locator("tbody tr").count() > 0
    matrix = phone.locator(
        "section.report-table", has=phone.locator("h2", has_text="each pair of annotators")
    )
    assert "—" not in matrix.locator("tbody tr").first.inner_text()
    width = phone.evaluate("document.documentElement.scrollWidth")
    screenshot("dashboard-likert-phone", phone)
    context.close()
    assert width <= 390  # wide tables scroll inside their box, not the page
