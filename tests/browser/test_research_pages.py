"""A researcher uploads a study file, watches its progress, and downloads an export."""

import csv
import io
import json

import pytest

from annotation.models import Study
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from tests.browser_fixtures import POLL_MS, open_signed_in
from tests.conftest import claim_study_file
from tests.factories import ParticipantFactory, researcher_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_researcher_uploads_sees_progress_and_downloads_an_export(
    live_server, page, screenshot, django_user_model, tmp_path, settings, quick_polls
):
    settings.EXPORT_DIR = tmp_path / "exports"
    open_signed_in(page, live_server, researcher_user("rosa", password="a-long-password-1"), "/research/")
    page.wait_for_selector("text=Your studies")

    broken = claim_study_file(slug="browser-study", items=3)
    broken["items"][1]["payload"]["sentences"] = []
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    (tmp_path / "good.json").write_text(json.dumps(claim_study_file(slug="browser-study", items=3)))
    page.get_by_role("link", name="New study from a file").click()
    page.set_input_files("#study_file", str(tmp_path / "broken.json"))
    page.get_by_role("button", name="Load the study").click()
    page.wait_for_selector("#upload-errors")
    assert "items[1].payload.sentences" in page.inner_text("#upload-errors")
    screenshot("research-upload-errors")

    page.set_input_files("#study_file", str(tmp_path / "good.json"))
    page.get_by_role("button", name="Load the study").click()
    page.wait_for_selector("#progress-responses")
    assert page.inner_text("#progress-responses") == "0 / 6"

    study = Study.objects.get(slug="browser-study")

    participant = ParticipantFactory(source="prolific", platform_worker_id="BROWSER-PID", enrolled_in=study)
    submit_response(
        assignment=assign_next_item(participant=participant, study=study), answer={"label": "neutral"}
    )
    page.wait_for_function(
        "document.querySelector('#progress-responses').innerText === '1 / 6'", timeout=15000, polling=POLL_MS
    )
    screenshot("research-overview")

    page.get_by_role("link", name="Exports").click()
    page.select_option("#format", "csv")
    page.get_by_role("button", name="Start the export").click()
    link = page.wait_for_selector("a.download", timeout=20000)
    screenshot("research-exports")
    with page.expect_download() as info:
        link.click()
    with open(info.value.path(), encoding="utf-8") as handle:
        content = handle.read()
    rows = list(csv.DictReader(io.StringIO(content)))
    assert len(rows) == 1 and rows[0]["answer.label"] == "neutral"
    assert "BROWSER-PID" not in content

    page.get_by_role("link", name="← browser-study".replace("browser-study", study.title)).click()
    page.get_by_role("link", name="Participants").click()
    page.wait_for_selector("#participants")
    screenshot("research-participants")
