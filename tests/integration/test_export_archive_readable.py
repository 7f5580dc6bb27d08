"""Usability defect 23: the README inside the SQLite zip unpacked with mode 600. Downloaded
through the API, every file of the archive unpacks readable by everyone (0644). (The
column names the defect also named are one list for every format, shown by
tests/integration/test_exports.py::test_one_name_per_column_in_csv_jsonl_sqlite_and_the_api.)"""

import io
import stat
import zipfile

import pytest
from rest_framework.test import APIClient

from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from tests.conftest import claim_study_file
from tests.factories import researcher_user

pytestmark = pytest.mark.django_db


def test_every_file_in_the_sqlite_zip_is_readable_by_everyone(
    django_user_model, settings, tmp_path, enrolled, django_capture_on_commit_callbacks
):
    settings.EXPORT_DIR = tmp_path
    owner = researcher_user("owner", password="pw-owner-1")
    study = load_study_file(claim_study_file(slug="owned", items=2), owner=owner).study
    person = enrolled(study, source="prolific", platform_worker_id="P1")
    submit_response(assignment=assign_next_item(participant=person, study=study), answer={"label": "neutral"})

    client = APIClient()
    client.force_authenticate(owner)
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post("/api/v1/studies/owned/exports/", {"format": "sqlite"}, format="json")
    assert started.status_code == 202, started.content
    status = client.get(f"/api/v1/studies/owned/exports/{started.json()['id']}/").json()
    assert status["status"] == "done", status
    download = client.get(status["download"])
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    modes = {entry.filename: stat.S_IMODE(entry.external_attr >> 16) for entry in archive.infolist()}
    assert modes == {"owned.sqlite": 0o644, "README.md": 0o644}
