"""Issue 42: every writer of a study makes a version with a readable diff; a frozen plan
turns a change into a deviation with its reason, or refuses it without one."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from annotation.models import Study, StudyVersion
from annotation.services.authoring.studies import load_study_file
from annotation.services.authoring.study_files import study_file_of
from annotation.services.authoring.versions import FROZEN_REFUSAL, digest_of
from tests.conftest import claim_study_file, logged_in
from tests.helpers.admin import admin_form_data

pytestmark = pytest.mark.django_db


def _versions(slug: str) -> list[StudyVersion]:
    return list(StudyVersion.objects.filter(study__slug=slug).order_by("number"))


def _builder_fields(study: Study) -> dict:
    data = study_file_of(study, items=False)
    fields = {k: v for k, v in data.items() if isinstance(v, (str, int)) and not isinstance(v, bool)}
    return {**fields, "config": json.dumps(data["config"])}


def test_every_writer_makes_a_version_and_a_frozen_plan_takes_changes_only_as_deviations(
    client_for, users, tmp_path, superuser
):
    load_study_file(claim_study_file(slug="vers", status="draft"), owner=users["owner"])
    owner = client_for("owner")
    # the API
    assert owner.patch("/api/v1/studies/vers/", {"title": "Claims, v2"}, format="json").status_code == 200
    # the study file upload page
    page = logged_in(users["owner"])
    file = claim_study_file(slug="vers", title="Claims, v3", status="draft")
    upload = SimpleUploadedFile("s.json", json.dumps(file).encode(), content_type="application/json")
    assert page.post("/research/studies/new/", {"study_file": upload}).status_code == 302
    # the command
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**file, "instructions": "Read twice."}))
    call_command("loadstudy", str(path), "--update")
    # the admin
    admin = logged_in(superuser)
    study = Study.objects.get(slug="vers")
    changed = admin_form_data(Study, study, superuser, annotations_per_item=3)
    assert admin.post(f"/admin/annotation/study/{study.pk}/change/", changed).status_code == 302
    # the builder
    builder = {**_builder_fields(Study.objects.get(slug="vers")), "items_per_session": 5, "action": "save"}
    assert page.post("/research/s/vers/edit/", builder).status_code == 302
    versions = _versions("vers")
    assert [v.source for v in versions] == ["command", "api", "upload", "command", "admin", "builder"]
    assert versions[1].diff == 'title: "Claims under test" → "Claims, v2"'
    assert versions[3].changed == ["instructions"]
    assert versions[4].diff == "annotations_per_item: 2 → 3"
    assert versions[5].diff == "items_per_session: 4 → 5"
    assert Study.objects.get(slug="vers").version == 6

    plan = {"populations": ["passed", "all"], "tests": ["claim.accuracy by system"], "sample_size": 40}
    frozen = owner.post("/api/v1/studies/vers/freeze/", {"analysis_plan": plan}, format="json").json()
    study = Study.objects.get(slug="vers")
    last = _versions("vers")[-1]
    assert frozen["frozen_digest"] == study.frozen_digest == last.digest
    assert last.source == "freeze" and last.changed == ["plan"]
    assert last.digest == digest_of({**last.study_file, "items": last.items_digest}, last.plan)

    refused = owner.patch("/api/v1/studies/vers/", {"title": "Quietly"}, format="json")
    assert refused.status_code == 400
    assert refused.json() == {"deviation_reason": [FROZEN_REFUSAL]}
    assert Study.objects.get(slug="vers").title == "Claims, v3"
    item = json.dumps({**file["items"][0], "external_id": "n1"})
    items = owner.post("/api/v1/studies/vers/items/", item, content_type="application/x-ndjson")
    assert items.status_code == 400 and items.json() == {"deviation_reason": [FROZEN_REFUSAL]}
    assert not Study.objects.get(slug="vers").items.filter(external_id="n1").exists()
    why = {"title": "Fewer words", "deviation_reason": "The pilot found the title misleading."}
    assert owner.patch("/api/v1/studies/vers/", why, format="json").status_code == 200
    deviation = _versions("vers")[-1]
    assert deviation.deviation and deviation.reason == why["deviation_reason"]
    assert deviation.diff == 'title: "Claims, v3" → "Fewer words"'
    listed = owner.get("/api/v1/studies/vers/versions/").json()["results"]
    assert [v["number"] for v in listed] == list(range(8, 0, -1))
    old = owner.get("/api/v1/studies/vers/versions/2/study-file/").json()
    assert old["title"] == "Claims, v2" and len(old["items"]) == 6 and "status" not in old
