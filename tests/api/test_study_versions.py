"""Issue 42: every writer of a study makes a version with a readable diff; a frozen plan
turns a change into a deviation with its reason, or refuses it without one."""

from __future__ import annotations

import csv
import html
import json
import sqlite3
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotation.models import Study, StudyVersion
from annotation.services.authoring.exam_settings import EXAM_WITHDRAWN
from annotation.services.authoring.studies import load_study_file
from annotation.services.authoring.study_files import study_file_of
from annotation.services.authoring.versions import FROZEN_REFUSAL, digest_of
from annotation.services.exports.export import export_study
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from tests.conftest import EXAMPLES, claim_study_file, logged_in
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

    unexplained = {**_builder_fields(Study.objects.get(slug="vers")), "title": "Quietly", "action": "save"}
    assert html.escape(FROZEN_REFUSAL) in page.post("/research/s/vers/edit/", unexplained).content.decode()
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
    explained = {**unexplained, "deviation_reason": "Readers asked for a shorter title."}
    assert page.post("/research/s/vers/edit/", explained).status_code == 302
    assert _versions("vers")[-1].source == "builder" and _versions("vers")[-1].deviation
    listed = owner.get("/api/v1/studies/vers/versions/").json()["results"]
    assert [v["number"] for v in listed] == list(range(9, 0, -1))  # (before the items below)
    items = tmp_path / "more.jsonl"
    items.write_text(json.dumps({**file["items"][0], "external_id": "n2"}) + "\n")
    with pytest.raises(CommandError, match="deviation_reason"):
        call_command("loaditems", "vers", str(items), stdout=StringIO())
    call_command("loaditems", "vers", str(items), "--reason", "One more claim.", stdout=StringIO())
    assert (
        _versions("vers")[-1].diff == "items[n2]: added" and _versions("vers")[-1].reason == "One more claim."
    )
    old = owner.get("/api/v1/studies/vers/versions/2/study-file/").json()
    assert old["title"] == "Claims, v2" and len(old["items"]) == 6 and "status" not in old


def test_the_frozen_digest_and_the_deviations_show_on_the_pages_and_in_every_export(
    client_for, users, enrolled, tmp_path
):
    load_study_file(claim_study_file(slug="shown", status="draft"), owner=users["owner"])
    page = logged_in(users["owner"])
    plan = {"populations": "passed", "tests": "claim accuracy by system", "sample_size": "24"}
    assert (
        page.post("/research/s/shown/versions/freeze/", {**plan, "populations": ["passed"]}).status_code
        == 302
    )
    study = Study.objects.get(slug="shown")
    assert (
        study.analysis_plan["tests"] == ["claim accuracy by system"]
        and study.analysis_plan["sample_size"] == 24
    )
    refused = page.post("/research/s/shown/versions/freeze/", {"populations": ["passed"]})
    assert refused.status_code == 400 and "already frozen" in refused.content.decode()
    why = {"instructions": "Read twice.", "deviation_reason": "Pilot readers skimmed."}
    client_for("owner").patch("/api/v1/studies/shown/", why, format="json")
    client_for("owner").post("/api/v1/studies/shown/status/", {"status": "live"}, format="json")
    study = Study.objects.get(slug="shown")
    participant = enrolled(study)
    submit_response(
        assignment=assign_next_item(participant=participant, study=study),
        answer={"label": "supports", "evidence": [0]},
    )

    for path in ("/research/s/shown/", "/research/s/shown/dashboard/", "/research/s/shown/versions/"):
        shown = page.get(path).content.decode()
        assert study.frozen_digest[:16] in shown, path
    dashboard = page.get("/research/s/shown/dashboard/").content.decode()
    assert 'id="dashboard-deviations"' in dashboard and "Pilot readers skimmed." in dashboard
    versions = page.get("/research/s/shown/versions/").content.decode()
    assert "instructions: " in versions and "(deviation)" in versions
    file = page.get("/research/s/shown/versions/1/study-file/")
    assert file["Content-Disposition"] == 'attachment; filename="shown-v1.json"'

    csv_export = export_study(study, fmt="csv", path=tmp_path / "a.csv", use_copy=False)
    with open(csv_export.path, newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["plan_digest"] == study.frozen_digest and row["study_version"] == str(study.version) == "3"
    database = export_study(study, fmt="sqlite", path=tmp_path / "a.sqlite").path
    with sqlite3.connect(database) as connection:
        (digest, frozen) = connection.execute("SELECT plan_digest, frozen_version FROM study").fetchone()
        stored = connection.execute(
            "SELECT study_file, plan, items_digest, deviation, reason FROM versions WHERE number = ?",
            (frozen,),
        ).fetchone()
        deviations = connection.execute("SELECT reason FROM versions WHERE deviation").fetchall()
    assert digest == study.frozen_digest
    assert digest_of({**json.loads(stored[0]), "items": stored[2]}, json.loads(stored[1])) == digest
    assert deviations == [("Pilot readers skimmed.",)]


def test_an_exam_withdrawn_from_a_frozen_study_is_a_deviation_with_the_sites_reason(client_for, users):
    """Unsharing an exam detaches it from the other researchers' studies (exam_settings): a
    change of their study files that nobody asked for, so the rule records it, and says why."""
    exam = json.loads((EXAMPLES / "simulation-exam.json").read_text())
    study = json.loads((EXAMPLES / "simulation.json").read_text())
    owner, other = client_for("owner"), client_for("other")
    assert owner.post("/api/v1/studies/", {**exam, "slug": "owners-exam"}, format="json").status_code == 201
    assert (
        owner.patch("/api/v1/studies/owners-exam/", {"shared_with": ["other"]}, format="json").status_code
        == 200
    )
    theirs = {
        **study,
        "slug": "others-sim",
        "qualification": "owners-exam",
        "public": False,
        "status": "draft",
    }
    assert other.post("/api/v1/studies/", theirs, format="json").status_code == 201
    assert (
        other.post("/api/v1/studies/others-sim/freeze/", {"analysis_plan": {}}, format="json").status_code
        == 200
    )
    assert owner.patch("/api/v1/studies/owners-exam/", {"shared_with": []}, format="json").status_code == 200
    last = _versions("others-sim")[-1]
    assert (last.source, last.deviation, last.reason) == ("rule", True, EXAM_WITHDRAWN)
    assert last.diff == 'qualification: removed (was "owners-exam")'
