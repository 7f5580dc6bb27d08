"""The jobs page, its self-polling rows, one permission rule and status shape, and the admin."""

from __future__ import annotations

import json

import pytest

from annotation.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_researchers_jobs(django_user_model, make_claim_study):
    alice = django_user_model.objects.create_user("alice", is_staff=True)
    bob = django_user_model.objects.create_user("bob", is_staff=True)
    mine, theirs = make_claim_study(slug="alice-study"), make_claim_study(slug="bob-study")
    mine.owner, theirs.owner = alice, bob
    mine.save()
    theirs.save()
    running = Job.objects.create(
        kind="continuations",
        study=mine,
        status="running",
        progress_done=3,
        progress_total=8,
        message="3 of 8",
    )
    hidden = Job.objects.create(
        kind="continuations", study=theirs, status="running", error="secret traceback"
    )
    done = Job.objects.create(
        kind="edit_and_generate", study=mine, status="done", progress_done=2, progress_total=2
    )
    return alice, bob, running, hidden, done


def test_the_page_is_for_researchers_only(client, django_user_model):
    assert client.get("/research/jobs/").status_code == 302
    client.force_login(django_user_model.objects.create_user("someone"))
    assert client.get("/research/jobs/").status_code == 403
    assert client.get("/research/jobs/1/").status_code == 403


def test_a_researcher_sees_the_jobs_of_their_studies_with_progress(client, two_researchers_jobs):
    alice, _bob, running, hidden, done = two_researchers_jobs
    client.force_login(alice)
    html = client.get("/research/jobs/").content.decode()
    assert f'data-job-id="{running.pk}"' in html and f'data-job-id="{done.pk}"' in html
    assert f'data-job-id="{hidden.pk}"' not in html
    assert '<progress max="8" value="3"' in html and "3 / 8 (38%)" in html and "3 of 8" in html


def test_a_row_polls_its_own_progress_until_the_job_is_finished(client, two_researchers_jobs):
    alice, _bob, running, hidden, done = two_researchers_jobs
    client.force_login(alice)
    row = client.get(f"/research/jobs/{running.pk}/").content.decode()
    assert f'data-job-id="{running.pk}"' in row and 'data-finished="0"' in row
    assert f'hx-get="/research/jobs/{running.pk}/" hx-trigger="every 2s"' in row
    assert '<progress max="8" value="3"' in row and "3 / 8 (38%)" in row and "Running" in row
    finished = client.get(f"/research/jobs/{done.pk}/").content.decode()
    assert 'data-finished="1"' in finished and "hx-get" not in finished
    assert client.get(f"/research/jobs/{hidden.pk}/").status_code == 404


def test_the_pages_and_the_api_show_one_job_status(client, two_researchers_jobs):
    """``job_status`` is the one shape: the API's job is it plus what was asked and what came out."""
    from annotation.services.jobs import job_status

    alice, _bob, running, _hidden, _done = two_researchers_jobs
    client.force_login(alice)
    shown = client.get(f"/api/v1/jobs/{running.pk}/").json()
    status = job_status(Job.objects.select_related("study").get(pk=running.pk))
    assert {key: shown[key] for key in status if not key.endswith("_at")} == {
        key: value for key, value in status.items() if not key.endswith("_at")
    }
    assert status["status_label"] == "Running" and status["finished"] is False
    assert status["study"] == "alice-study" and status["progress_total"] == 8


def test_an_admin_sees_every_job(client, django_user_model, two_researchers_jobs):
    *_, running, hidden, done = two_researchers_jobs
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw"))
    html = client.get("/research/jobs/").content.decode()
    assert all(f'data-job-id="{job.pk}"' in html for job in (running, hidden, done))


def test_a_job_is_started_from_the_admin(
    client, django_user_model, make_claim_study, django_capture_on_commit_callbacks
):
    root = django_user_model.objects.create_superuser("root", "", "pw")
    client.force_login(root)
    study = make_claim_study()
    form = client.get("/admin/annotation/job/add/").content.decode()
    assert "edit_and_generate" in form and "continuations" in form and "rate_llm" in form
    parameters = {"requests": "/data/requests.jsonl", "model": "gpt2-xl", "methods": ["none", "rome"]}
    with django_capture_on_commit_callbacks() as queued:
        response = client.post(
            "/admin/annotation/job/add/",
            {"kind": "edit_and_generate", "study": study.pk, "parameters": json.dumps(parameters)},
        )
    assert response.status_code == 302
    job = Job.objects.get()
    assert (job.kind, job.study, job.created_by, job.status) == ("edit_and_generate", study, root, "queued")
    assert job.parameters["top_k"] == 50 and job.parameters["methods"] == ["none", "rome"]
    assert len(queued) == 1


def test_the_admin_form_names_bad_parameters_and_starts_nothing(client, django_user_model, make_claim_study):
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw"))
    study = make_claim_study()
    response = client.post(
        "/admin/annotation/job/add/",
        {"kind": "edit_and_generate", "study": study.pk, "parameters": json.dumps({"methods": ["magic"]})},
    )
    html = response.content.decode()
    assert response.status_code == 200 and "parameters.model" in html and "parameters.methods" in html
    response = client.post(
        "/admin/annotation/job/add/",
        {"kind": "continuations", "parameters": json.dumps({"corpus": "/c.jsonl", "model": "m"})},
    )
    assert "works on a study" in response.content.decode()
    assert not Job.objects.exists()


def test_the_jobs_page_and_the_api_list_the_same_jobs(client, django_user_model, make_claim_study):
    """One permission rule: bob's own jobs on a study no longer shared with him vanish from both."""
    alice = django_user_model.objects.create_user("alice", is_staff=True)
    bob = django_user_model.objects.create_user("bob", is_staff=True)
    hers, his = make_claim_study(slug="alice-study"), make_claim_study(slug="bob-study")
    hers.owner, his.owner = alice, bob
    hers.save()
    his.save()
    hers.shared_with.add(bob)
    on_his = Job.objects.create(kind="export", study=his, created_by=bob, status="running")
    by_her_on_his = Job.objects.create(kind="reports", study=his, created_by=alice, status="done")
    studyless = Job.objects.create(kind="reports", created_by=bob, status="done")
    was_shared = Job.objects.create(kind="export", study=hers, created_by=bob, status="running")
    Job.objects.create(kind="reports", created_by=alice, status="done")
    hers.shared_with.remove(bob)

    client.force_login(bob)
    html = client.get("/research/jobs/").content.decode()
    on_page = {job.pk for job in Job.objects.all() if f'data-job-id="{job.pk}"' in html}
    from_api = {job["id"] for job in client.get("/api/v1/jobs/").json()["results"]}
    assert on_page == from_api == {on_his.pk, by_her_on_his.pk, studyless.pk}

    assert client.post(f"/api/v1/jobs/{was_shared.pk}/cancel/").status_code == 404
    was_shared.refresh_from_db()
    assert was_shared.status == "running"
