"""The API's study record says why, when and on what figures the study closed
(``closed_because``, ``closed_at``, ``closed_details``), read-only, as the schema documents
(every answer here is checked against it)."""

from __future__ import annotations

import pytest

from annotation.models import Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.study_status import close_study_by_rule
from tests.helpers.adaptive import likert_study_file

pytestmark = pytest.mark.django_db


def test_a_live_study_has_not_closed_and_a_researchers_close_is_recorded(client_for, owned_study):
    owner = client_for("owner")
    record = owner.get("/api/v1/studies/owned/").json()
    assert (record["closed_because"], record["closed_at"], record["closed_details"]) == ("", None, {})
    owner.post("/api/v1/studies/owned/status/", {"status": "closed"}, format="json")
    record = owner.get("/api/v1/studies/owned/").json()
    assert record["closed_because"] == "researcher" and record["closed_at"] is not None


def test_a_stopping_rules_close_carries_its_interval(client_for, users):
    stop = {"question": "quality", "systems": ["A", "B"], "ci_excludes_zero": True, "alpha": 0.05}
    study = load_study_file(likert_study_file(stop), owner=users["owner"]).study
    details = {"question": "quality", "systems": ["A", "B"], "difference": 1.5, "ci_low": 0.2, "ci_high": 2.8}
    assert close_study_by_rule(study, because=Study.ClosedBecause.STOPPING_RULE, details=details)
    record = client_for("owner").get(f"/api/v1/studies/{study.slug}/").json()
    assert record["closed_because"] == "stopping_rule" and record["closed_details"] == details
    assert record["closed_at"].startswith(study.closed_at.strftime("%Y-%m-%d"))


def test_the_closing_fields_cannot_be_written(client_for, owned_study):
    owner = client_for("owner")
    for field, value in (("closed_because", "budget"), ("closed_at", None), ("closed_details", {"a": 1})):
        answer = owner.patch("/api/v1/studies/owned/", {field: value}, format="json")
        assert answer.status_code == 400 and answer.json() == {field: ["This field cannot be changed."]}
    assert Study.objects.get(slug="owned").closed_because == ""
