"""A reports job started through the API may group agreement by any provenance key."""

from __future__ import annotations

import pytest

from annotation.models import Item, Job
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from scoring.models import Report

pytestmark = pytest.mark.django_db


@pytest.fixture
def study_answered_in_batches(owned_study, enrolled):
    """Two annotators label every item; items carry a ``batch`` provenance key."""
    for item in Item.objects.filter(study=owned_study):
        item.provenance = {**item.provenance, "batch": f"b{item.pk % 2}"}
        item.save(update_fields=["provenance"])
    for name in ("w1", "w2"):
        person = enrolled(owned_study, source="lab", platform_worker_id=name)
        while (assignment := assign_next_item(participant=person, study=owned_study)) is not None:
            submit_response(assignment=assignment, answer={"label": "neutral"})
    return owned_study


def test_reports_job_groups_agreement_by_the_keys_it_is_given(
    client_for, study_answered_in_batches, django_capture_on_commit_callbacks
):
    body = {"kind": "reports", "study": "owned", "parameters": {"by": ["batch"]}}
    with django_capture_on_commit_callbacks(execute=True):
        started = client_for("owner").post("/api/v1/jobs/", body, format="json")
    assert started.status_code == 201
    assert Job.objects.get().status == Job.Status.DONE
    groups = [
        r.group for r in Report.objects.filter(study=study_answered_in_batches, metric="agreement.percent")
    ]
    assert {g.get("batch") for g in groups} >= {"b0", "b1"}
    found = client_for("owner").get("/api/v1/studies/owned/reports/", {"metric": "agreement.percent"}).json()
    results = found["results"] if isinstance(found, dict) else found
    assert any("batch" in r["group"] and "pairs" in r["details"] for r in results)


@pytest.mark.parametrize("keys", [["question"], ["a__b"], ["x"] * 6, "system"])
def test_a_bad_key_is_refused_naming_the_field_and_nothing_starts(client_for, owned_study, keys):
    body = {"kind": "reports", "study": "owned", "parameters": {"by": keys}}
    refused = client_for("owner").post("/api/v1/jobs/", body, format="json")
    assert refused.status_code == 400
    assert "parameters.by" in str(refused.json())
    assert not Job.objects.exists()
