"""Jobs and exports through the API: start, follow, download; raw platform ids only for admins."""

from __future__ import annotations

import csv
import io

import pytest

from annotation.models import Job
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response

pytestmark = pytest.mark.django_db


@pytest.fixture
def one_mturk_answer(owned_study, enrolled, tmp_path, settings):
    settings.EXPORT_DIR = tmp_path
    person = enrolled(owned_study, source="mturk", platform_worker_id="A1WORKER")
    submit_response(
        assignment=assign_next_item(participant=person, study=owned_study), answer={"label": "neutral"}
    )
    return person


def test_start_an_export_follow_it_and_download_the_file(
    client_for, one_mturk_answer, django_capture_on_commit_callbacks
):
    owner = client_for("owner")
    with django_capture_on_commit_callbacks(execute=True):
        started = owner.post("/api/v1/studies/owned/exports/", {"format": "csv"}, format="json")
    assert started.status_code == 202
    export_id = started.json()["id"]
    status = owner.get(f"/api/v1/studies/owned/exports/{export_id}/").json()
    assert status["status"] == "done" and status["percent"] == 100 and status["result"]["rows"] == 1
    download = owner.get(status["download"])
    assert download.status_code == 200
    rows = list(csv.DictReader(io.StringIO(b"".join(download.streaming_content).decode())))
    assert rows[0]["answer.label"] == "neutral"
    assert "A1WORKER" not in download.filename and "platform_worker_id" not in rows[0]


def test_download_before_the_export_finished_is_a_conflict(client_for, one_mturk_answer, users, owned_study):
    job = Job.objects.create(
        kind="export", study=owned_study, parameters={"format": "csv"}, created_by=users["owner"]
    )
    assert client_for("owner").get(f"/api/v1/studies/owned/exports/{job.pk}/download/").status_code == 409


def test_only_the_owner_and_admins_may_include_platform_ids(
    client_for, users, one_mturk_answer, django_capture_on_commit_callbacks
):
    users["owner"].studies.get(slug="owned").shared_with.add(users["other"])
    body = {"format": "csv", "include_platform_ids": True}
    refused = client_for("other").post("/api/v1/studies/owned/exports/", body, format="json")
    assert refused.status_code == 400 and "include_platform_ids" in refused.json()
    via_jobs = client_for("other").post(
        "/api/v1/jobs/", {"kind": "export", "study": "owned", "parameters": body}, format="json"
    )
    assert via_jobs.status_code == 400
    assert not Job.objects.exists()
    for role in ("owner", "admin"):
        with django_capture_on_commit_callbacks(execute=True):
            allowed = client_for(role).post("/api/v1/studies/owned/exports/", body, format="json")
        download = client_for(role).get(f"/api/v1/studies/owned/exports/{allowed.json()['id']}/download/")
        assert "A1WORKER" in b"".join(download.streaming_content).decode()


def test_jobs_api_starts_any_registered_kind_and_cancels(client_for, one_mturk_answer):
    owner = client_for("owner")
    kinds = {kind["name"]: kind for kind in owner.get("/api/v1/job-kinds/").json()}
    assert kinds["export"]["parameters"] == ["format", "include_platform_ids"]
    bad = owner.post("/api/v1/jobs/", {"kind": "nope", "study": "owned"}, format="json")
    assert bad.status_code == 400 and "kind" in bad.json()
    bad_parameters = owner.post(
        "/api/v1/jobs/", {"kind": "export", "study": "owned", "parameters": {"format": "xls"}}, format="json"
    )
    assert "parameters.format" in bad_parameters.json()
    job = owner.post(
        "/api/v1/jobs/",
        {"kind": "export", "study": "owned", "parameters": {"format": "jsonl"}},
        format="json",
    ).json()
    assert job["status"] == "queued"  # the task is sent when the transaction commits
    cancelled = owner.post(f"/api/v1/jobs/{job['id']}/cancel/", format="json").json()
    assert cancelled["status"] == "cancelled"
    assert owner.get("/api/v1/jobs/?status=cancelled").json()["count"] == 1


def _bulk_answers(study, person, count: int, note_bytes: int) -> None:
    """``count`` answered pages of one item (one attempt each), written in two bulk inserts."""
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import Assignment, Response

    item = study.items.first()
    now = timezone.now()
    assignments = Assignment.objects.bulk_create(
        Assignment(
            study=study,
            item=item,
            participant=person,
            position=n,
            attempt=n,
            status=Assignment.Status.ANSWERED,
            assigned_at=now,
            expires_at=now + timedelta(hours=1),
            answered_at=now,
        )
        for n in range(1, count + 1)
    )
    answer = {"label": "supports", "evidence": [0], "note": "n" * note_bytes}
    Response.objects.bulk_create(
        Response(assignment=a, study=study, item=item, participant=person, answer=answer, answered_at=now)
        for a in assignments
    )


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_an_export_of_several_megabytes_through_the_api_finishes_with_its_progress(
    client_for,
    owned_study,
    enrolled,
    tmp_path,
    settings,
    django_capture_on_commit_callbacks,
    fmt,
    monkeypatch,
):
    """A COPY's connection takes no other statement until it ends: the job's progress is
    reported between COPYs (several here), never in the middle of one."""
    from annotation.services.exports import selects

    monkeypatch.setattr(selects, "COPY_CHUNK_ROWS", 1000)
    settings.EXPORT_DIR = tmp_path
    _bulk_answers(owned_study, enrolled(owned_study, source="lab", platform_worker_id="bulk"), 2500, 2000)
    owner = client_for("owner")
    with django_capture_on_commit_callbacks(execute=True):
        started = owner.post("/api/v1/studies/owned/exports/", {"format": fmt}, format="json")
    status = owner.get(f"/api/v1/studies/owned/exports/{started.json()['id']}/").json()
    assert status["status"] == "done", status
    assert status["result"]["rows"] == 2500 and status["result"]["bytes"] > 4 << 20
    job = Job.objects.get(pk=started.json()["id"])
    assert (job.progress_done, job.progress_total) == (2500, 2500) and status["percent"] == 100
    lines = b"".join(owner.get(status["download"]).streaming_content).decode().splitlines()
    assert len(lines) == 2500 + (fmt == "csv")


@pytest.mark.parametrize(
    ("kind", "parameters"), [("reports", {"trigger": "dashboard"}), ("export", {"format": "csv"})]
)
def test_a_reports_or_export_job_without_a_study_is_a_400(client_for, users, kind, parameters):
    """API review D4: such a job was queued (201) and always failed in the worker."""
    answer = client_for("owner").post(
        "/api/v1/jobs/", {"kind": kind, "study": None, "parameters": parameters}, format="json"
    )
    assert answer.status_code == 400
    assert answer.json() == {"study": [f"A {kind} job works on a study: choose one."]}
    assert not Job.objects.exists()
