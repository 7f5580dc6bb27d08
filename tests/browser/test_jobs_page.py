"""A researcher watches a job's progress bar move on /research/jobs/ without reloading."""

import pytest

from annotation.models import Job
from annotation.services.jobs import claim_job, finish_job, report_progress
from tests.browser_fixtures import POLL_MS, open_signed_in
from tests.conftest import claim_study_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_progress_bars_follow_the_running_job(live_server, page, screenshot, django_user_model, quick_polls):
    from annotation.services.authoring.studies import load_study_file

    user = django_user_model.objects.create_user("res", password="a-long-test-password", is_staff=True)
    study = load_study_file(claim_study_file(slug="watched"), owner=user).study
    job = Job.objects.create(kind="edit_and_generate", study=study)
    claim_job(job.pk)
    report_progress(job.pk, done=1, total=4, message="case c1: rome")
    earlier = Job.objects.create(
        kind="continuations", study=study, status="done", progress_done=5, progress_total=5
    )

    open_signed_in(page, live_server, user, "/research/jobs/")
    row = page.locator(f'tr[data-job-id="{job.pk}"]')
    row.wait_for()
    assert row.locator("progress").get_attribute("value") == "1"
    assert "1 / 4 (25%)" in row.inner_text() and "Running" in row.inner_text()
    assert page.locator(f'tr[data-job-id="{earlier.pk}"]').inner_text().count("Done") == 1
    screenshot("jobs-running")

    report_progress(job.pk, done=3, total=4, message="case c2: memit")
    page.wait_for_function(
        f"document.querySelector('tr[data-job-id=\"{job.pk}\"] progress').value == 3",
        timeout=10000,
        polling=POLL_MS,
    )
    assert "case c2: memit" in row.inner_text()

    report_progress(job.pk, done=4, message="case c2 done, 12 items added")
    finish_job(job.pk, result={"added": 12})
    page.wait_for_function(
        f"document.querySelector('tr[data-job-id=\"{job.pk}\"]').dataset.finished == '1'",
        timeout=10000,
        polling=POLL_MS,
    )
    assert "Done" in row.inner_text() and "4 / 4 (100%)" in row.inner_text()
    assert row.locator('[data-field="finished_at"]').inner_text() != "—"
    screenshot("jobs-done")
