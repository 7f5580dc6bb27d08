"""Researchers' pages: study list, upload with per-field errors, overview, participants, exports."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Enrollment, Job, Participant, Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.pseudonyms import participant_pseudonym
from tests.conftest import claim_study_file
from tests.factories import researcher_user

pytestmark = pytest.mark.django_db


def upload(client, data: dict):
    file = SimpleUploadedFile("study.json", json.dumps(data).encode(), content_type="application/json")
    return client.post("/research/studies/new/", {"study_file": file})


def test_pages_need_a_researcher(client, django_user_model):
    assert client.get("/research/").status_code == 302
    client.force_login(django_user_model.objects.create_user("plain"))
    assert client.get("/research/").status_code == 403


def test_upload_creates_the_study_and_the_top_bar_links_research(client, researcher):
    answer = upload(client, claim_study_file(slug="mine"))
    assert answer.status_code == 302 and answer["Location"] == "/research/s/mine/"
    assert Study.objects.get(slug="mine").owner == researcher
    listing = client.get("/research/").content.decode()
    assert 'href="/research/s/mine/"' in listing and 'href="/research/">Research</a>' in listing


def test_upload_errors_are_listed_per_item_and_field(client, researcher):
    data = claim_study_file(slug="bad")
    data["items"][1]["payload"]["sentences"] = []
    data["items"][3]["gold"] = {"label": "maybe"}
    answer = client.post(
        "/research/studies/new/", {"study_file": SimpleUploadedFile("s.json", json.dumps(data).encode())}
    )
    html = answer.content.decode()
    assert answer.status_code == 400
    assert "<td>items[1].payload.sentences (external_id &#x27;c1&#x27;)</td>" in html
    assert "<td>items[3].gold.label (external_id &#x27;c3&#x27;)</td>" in html
    assert not Study.objects.filter(slug="bad").exists()
    not_json = client.post("/research/studies/new/", {"study_file": SimpleUploadedFile("s.json", b"{nope")})
    assert b"Not valid JSON" in not_json.content


def test_upload_cannot_take_over_another_researchers_slug(client, researcher, django_user_model):
    load_study_file(claim_study_file(slug="taken"), owner=django_user_model.objects.create_user("x"))
    assert b"This slug is not available" in upload(client, claim_study_file(slug="taken")).content


def test_overview_shows_progress_links_and_changes_status(client, researcher):
    study = load_study_file(claim_study_file(slug="mine", status="draft"), owner=researcher).study
    html = client.get("/research/s/mine/").content.decode()
    for link in (
        "/research/s/mine/dashboard/",
        "/research/s/mine/participants/",
        "/research/s/mine/exports/",
        "/research/jobs/",
    ):
        assert f'href="{link}"' in html
    assert 'id="progress-responses">0 / 12<' in html
    assert b"0 / 12" in client.get("/research/s/mine/progress/").content
    client.post("/research/s/mine/status/", {"status": "live"})
    study.refresh_from_db()
    assert study.status == "live"


def test_participant_actions_flag_and_exclude_in_the_study(client, researcher, enrolled):
    study = load_study_file(claim_study_file(slug="mine"), owner=researcher).study
    person = enrolled(study, source="prolific", platform_worker_id="SECRET-PID")
    page = client.get("/research/s/mine/participants/").content.decode()
    # The owner sees the export pseudonym and, beside it, the Prolific id (issue 12).
    assert participant_pseudonym(study, person) in page and "SECRET-PID" in page
    url = f"/research/s/mine/participants/{person.public_id}/"
    client.post(url, {"action": "flag", "confirm": "yes"})  # a flag needs its reason
    assert not Enrollment.objects.get(participant=person).flagged
    for action in ("flag", "exclude", "block"):  # block: an admin's act, not on this page
        client.post(url, {"action": action, "reason": "too fast", "confirm": "yes"})
    enrollment = Enrollment.objects.get(participant=person)
    person.refresh_from_db()
    assert enrollment.flagged and enrollment.flag_reason == "too fast" and not person.blocked
    assert enrollment.excluded
    detail = client.get(f"/research/s/mine/participants/{person.public_id}/").content.decode()
    assert 'id="attention-outcome">—<' in detail


def test_exports_page_starts_a_job_and_offers_the_download(
    client, researcher, enrolled, settings, tmp_path, django_capture_on_commit_callbacks, django_user_model
):
    settings.EXPORT_DIR = tmp_path
    study = load_study_file(claim_study_file(slug="mine"), owner=researcher).study
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/research/s/mine/exports/", {"format": "jsonl"})
    job = Job.objects.get()
    assert job.status == "done"
    html = client.get("/research/s/mine/exports/").content.decode()
    assert f'href="/research/s/mine/exports/{job.pk}/download/"' in html
    assert "include_platform_ids" in html  # the owner may ask for raw platform ids
    download = client.get(f"/research/s/mine/exports/{job.pk}/download/")
    assert download.status_code == 200 and download["Content-Disposition"].startswith("attachment")
    colleague = researcher_user("colleague", password="pw-colleague-1")
    study.shared_with.add(colleague)
    client.force_login(colleague)
    assert "include_platform_ids" not in client.get("/research/s/mine/exports/").content.decode()
    refused = client.post(
        "/research/s/mine/exports/", {"format": "csv", "include_platform_ids": "on"}, follow=True
    )
    assert b"Only the study&#x27;s owner or an admin" in refused.content and Job.objects.count() == 1


def test_another_researchers_study_is_a_404(client, researcher, django_user_model):
    load_study_file(claim_study_file(slug="theirs"), owner=django_user_model.objects.create_user("x"))
    for url in ("/research/s/theirs/", "/research/s/theirs/participants/", "/research/s/theirs/exports/"):
        assert client.get(url).status_code == 404
    assert Participant.objects.count() == 0
