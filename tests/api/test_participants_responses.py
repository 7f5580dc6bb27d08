"""Participants' quality figures and marks, responses with filters and a cursor, through the API."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Enrollment, Participant, Response
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.assignment import assign_next_item
from tests.conftest import claim_study_file
from tests.helpers.flow import answer_pages

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_raters(users, enrolled):
    """Three participants on the same two items: two agree, one does not."""
    data = claim_study_file(slug="owned", items=2, annotations_per_item=3, items_per_session=2)
    study = load_study_file(data, owner=users["owner"]).study
    people = [enrolled(study, source="prolific", platform_worker_id=f"PID-{n}") for n in range(3)]
    for person, label in zip(people, ["supports", "supports", "neutral"], strict=True):
        answer_pages(study, person, {"label": label, "evidence": [] if label == "neutral" else [0]})
    return study, people


def test_participant_list_reports_quality_figures(client_for, three_raters, users):
    study, people = three_raters
    rows = {
        row["participant"]: row
        for row in client_for("owner").get("/api/v1/studies/owned/participants/").json()["results"]
    }
    first, odd = rows[people[0].public_id], rows[people[2].public_id]
    assert first["answered"] == 2 and first["median_seconds_per_page"] is not None
    # per item: a label and 3 evidence sentences. Leaving the first rater out, the others
    # tie on the label and on sentence 0 (not counted) and agree on sentences 1 and 2.
    assert first["agreement"] == {"compared": 4, "agreed": 4, "rate": 1.0}
    # the odd one out faces a clear majority everywhere and matches it on sentences 1 and 2 only
    assert odd["agreement"] == {"compared": 8, "agreed": 4, "rate": 0.5}
    assert first["qualification"]["outcome"] == "none"
    # The owner (and admins) see the crowd id beside the export pseudonym (issue 12) …
    assert first["platform_worker_id"] == "PID-0" and first["pseudonym"].startswith("p")
    admin_rows = client_for("admin").get("/api/v1/studies/owned/participants/").json()["results"]
    assert {row["platform_worker_id"] for row in admin_rows} == {"PID-0", "PID-1", "PID-2"}
    # … a researcher it is only shared with does not.
    study.shared_with.add(users["other"])
    shared_rows = client_for("other").get("/api/v1/studies/owned/participants/").json()["results"]
    assert {row["platform_worker_id"] for row in shared_rows} == {None}


def test_participant_detail_lists_every_page(client_for, three_raters):
    _, people = three_raters
    detail = client_for("owner").get(f"/api/v1/studies/owned/participants/{people[0].public_id}/").json()
    assert [page["position"] for page in detail["pages"]] == [1, 2]
    assert all(page["status"] == "answered" for page in detail["pages"])


def test_flag_and_exclude_change_marks_and_delete_nothing_and_block_is_refused(client_for, three_raters):
    study, people = three_raters
    url = f"/api/v1/studies/owned/participants/{people[2].public_id}/"
    owner = client_for("owner")
    # Blocking is site-wide, an admin's act: a researcher gets a 400 naming the field.
    refused = owner.patch(url, {"flagged": True, "blocked": True}, format="json")
    assert refused.status_code == 400 and "blocked" in refused.json()
    assert not Enrollment.objects.get(participant=people[2], study=study).flagged
    answer = owner.patch(url, {"flagged": True, "flag_reason": "odd", "excluded": True}, format="json")
    assert answer.status_code == 200
    body = answer.json()
    assert (body["flagged"], body["flag_reason"], body["excluded"], body["blocked"]) == (
        True,
        "odd",
        True,
        False,
    )
    assert Enrollment.objects.get(participant=people[2], study=study).excluded
    assert Response.objects.filter(participant=people[2]).count() == 2
    assert owner.patch(url, {}, format="json").status_code == 400
    assert (
        owner.patch(
            "/api/v1/studies/owned/participants/nobody/", {"flagged": True}, format="json"
        ).status_code
        == 404
    )


def test_returned_participants_release_their_pages(client_for, users, enrolled):
    study = load_study_file(claim_study_file(slug="owned", items=3), owner=users["owner"]).study
    person = enrolled(study, source="prolific", platform_worker_id="PID-R")
    held = assign_next_item(participant=person, study=study)
    owner = client_for("owner")
    unknown = owner.post(
        "/api/v1/studies/owned/participants/returned/", {"participants": ["PID-R", "nope"]}, format="json"
    )
    assert unknown.status_code == 400
    assert Assignment.objects.get(pk=held.pk).status == "assigned"
    answer = owner.post(
        "/api/v1/studies/owned/participants/returned/", {"participants": ["PID-R"]}, format="json"
    )
    assert answer.json() == {"returned": 1, "released_assignments": 1}
    assert Assignment.objects.get(pk=held.pk).status == "released"
    assert Enrollment.objects.get(participant=person, study=study).status == "returned"


def test_responses_filter_and_page_with_a_cursor(client_for, three_raters):
    _, people = three_raters
    owner = client_for("owner")
    first = owner.get("/api/v1/responses/?study=owned&page_size=4").json()
    assert len(first["results"]) == 4 and first["next"]
    second = owner.get(first["next"].split("testserver")[1]).json()
    ids = [r["id"] for r in first["results"] + second["results"]]
    assert ids == sorted(ids) and len(ids) == 6
    assert owner.get("/api/v1/responses/?kind=claim&flagged=true").json()["results"] == []
    Response.objects.filter(participant=people[0]).update(answered_at=timezone.now() - timedelta(days=3))
    since = (timezone.now() - timedelta(days=1)).isoformat().replace("+00:00", "Z")
    recent = owner.get("/api/v1/responses/", {"since": since}).json()["results"]
    assert {r["participant"] for r in recent} == {people[1].public_id, people[2].public_id}
    assert owner.get("/api/v1/responses/?since=yesterday").status_code == 400
    assert owner.get("/api/v1/responses/?kind=nope").status_code == 400


def test_reports_list_by_metric(client_for, owned_study):
    from scoring.models import Report

    now = timezone.now()
    Report.objects.create(study=owned_study, metric="accuracy", value=0.5, n=4, computed_at=now)
    Report.objects.create(
        study=owned_study, metric="alpha", value=0.7, n=4, computed_at=now, population="passed"
    )
    owner = client_for("owner")
    assert owner.get("/api/v1/studies/owned/reports/").json()["count"] == 2
    only = owner.get("/api/v1/studies/owned/reports/?metric=alpha&population=passed").json()["results"]
    assert [(r["metric"], r["value"]) for r in only] == [("alpha", 0.7)]


def test_participants_of_other_studies_stay_invisible(client_for, three_raters, users):
    other_study = load_study_file(claim_study_file(slug="theirs", items=1), owner=users["other"]).study
    stranger = Participant.objects.create()
    Enrollment.objects.create(participant=stranger, study=other_study)
    assert (
        client_for("owner").get(f"/api/v1/studies/owned/participants/{stranger.public_id}/").status_code
        == 404
    )
