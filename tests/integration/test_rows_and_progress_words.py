"""One word for each count on the research pages: the exports table lists an export's
responses (not "rows" beside a progress of every table's rows), and a job that counts no
steps shows its state, not "0 / 0 (100%)"."""

from __future__ import annotations

import re

import pytest

from annotation.models import Job, Response
from annotation.services.authoring.study_changes import start_export
from tests.factories import researcher_user
from workers.progress import run_job_here

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner_and_study(make_claim_study, enrolled):
    from annotation.services.participation.assignment import assign_next_item
    from annotation.services.participation.submission import submit_response

    owner = researcher_user("rhea")
    study = make_claim_study(items=3, items_per_session=3, attention=0)
    study.owner = owner
    study.save()
    person = enrolled(study, source="prolific", platform_worker_id="P-1")
    while (assignment := assign_next_item(participant=person, study=study)) is not None:
        submit_response(assignment=assignment, answer={"label": "supports", "evidence": [0]})
    return owner, study


def exported(owner, study, fmt: str) -> Job:
    job = start_export(user=owner, study=study, parameters={"format": fmt})
    return run_job_here(job, description="export")


def test_the_exports_table_counts_responses_and_sqlite_progress_names_its_rows(client, owner_and_study):
    owner, study = owner_and_study
    responses = Response.objects.filter(study=study).count()
    sqlite, csv = exported(owner, study, "sqlite"), exported(owner, study, "csv")
    assert sqlite.status == csv.status == "done"
    client.force_login(owner)
    html = client.get(f"/research/s/{study.slug}/exports/").content.decode()
    assert "<th>Responses</th>" in html and "<th>Rows</th>" not in html
    counts = re.findall(r'<td class="num export-responses">(\d+)</td>', html)
    assert counts == [str(responses), str(responses)]
    assert f"{responses} of {responses} responses" in html  # the CSV's progress
    sqlite_progress = re.search(r"(\d+) of (\d+) rows of all tables", html)
    assert sqlite_progress and int(sqlite_progress.group(2)) > responses  # every table's rows
    assert not re.search(r"\d+ of \d+ rows<", html)


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        ("done", "finished"),
        ("failed", "stopped"),
        ("queued", "waiting to start"),
        ("running", "working (no steps to count)"),
    ],
)
def test_a_job_without_counted_steps_shows_its_state_not_zero_of_zero(client, owner_and_study, status, shown):
    owner, study = owner_and_study
    job = Job.objects.create(kind="prolific_publish", study=study, status=status, created_by=owner)
    client.force_login(owner)
    for html in (
        client.get("/research/jobs/").content.decode(),
        client.get(f"/research/jobs/{job.pk}/").content.decode(),
    ):
        assert "0 / 0" not in html
        assert f'data-field="count">{shown}</span>' in html


def test_a_job_with_counted_steps_still_shows_the_count(client, owner_and_study):
    owner, study = owner_and_study
    job = Job.objects.create(
        kind="continuations",
        study=study,
        status="running",
        progress_done=3,
        progress_total=8,
        created_by=owner,
    )
    client.force_login(owner)
    row = client.get(f"/research/jobs/{job.pk}/").content.decode()
    assert '<progress max="8" value="3"' in row and "3 / 8 (38%)" in row
