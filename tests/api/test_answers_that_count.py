"""Which answers count (annotation/services/populations.py), seen from every reader: the
overview page, the API's items and study detail, the admin, the quota, the reports and the
answers raters learn from agree on one study holding every kind of answer. A researcher's
flag and unflag move answers out of and back into all of them, and a study the quota
closed opens again for exactly the answers that stopped counting."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.test import Client

from annotation.models import Enrollment, Item, Participant, Study
from annotation.services.analysis.adjudication import adjudicate, annotator_responses
from annotation.services.analysis.human_answers import human_answers
from annotation.services.analysis.model_answers import ModelAnswer, model_participant, store_model_answers
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.assignment import assign_next_item, item_progress
from annotation.services.participation.capacity import quota_reached, study_is_full
from annotation.services.participation.flags import flag_in_study, set_excluded, unflag_in_study
from annotation.services.study_status import change_study_status
from tests.conftest import claim_study_file
from tests.factories import ParticipantFactory
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.flow import answer_pages, task_action
from tests.helpers.reports import computereports_json, report_row

pytestmark = pytest.mark.django_db

ANSWER = {"label": "supports", "evidence": [0]}
JUDGE = {"kind": "llm", "model": "judge", "version": "1"}


def crowd_study(users, **fields) -> Study:
    data = claim_study_file(
        slug="counted", items=2, **{"items_per_session": 2, "annotations_per_item": 3, **fields}
    )
    return load_study_file(data, owner=users["owner"]).study


def person(study: Study, name: str) -> Participant:
    return ParticipantFactory(enrolled_in=study, source="prolific", platform_worker_id=name)


def model_answers_everything(study: Study) -> None:
    judge = model_participant(JUDGE)
    answers = [
        ModelAnswer(item=item, raw="supports", answer=ANSWER) for item in Item.objects.filter(study=study)
    ]
    assert store_model_answers(study, judge, answers).created == 2


def enrollment(study: Study, participant: Participant) -> Enrollment:
    return Enrollment.objects.get(study=study, participant=participant)


def test_every_reader_counts_the_same_answers(users, client_for):
    study = crowd_study(users)
    alice = person(study, "alice")
    assert len(answer_pages(study, alice, ANSWER)) == 2
    excluded = person(study, "excluded")
    assert len(answer_pages(study, excluded, ANSWER)) == 2
    set_excluded(enrollment(study, excluded), excluded=True)
    flagged = person(study, "flagged")
    assert len(answer_pages(study, flagged, ANSWER)) == 2
    flag_in_study(enrollment(study, flagged), reason="failed attention checks")
    lines = [
        '{"participant": "lab1", "item": "c0", "answer": {"label": "supports", "evidence": [0]}}',
        '{"participant": "lab1", "item": "c1", "answer": {"label": "supports", "evidence": [0]}}',
        '{"participant": "lab2", "item": "c0", "answer": {"label": "supports", "evidence": [0]}}',
    ]
    assert import_responses(study, lines).created == 3
    model_answers_everything(study)
    adjudicate(
        study=study,
        item=Item.objects.get(study=study, external_id="c0"),
        answer=ANSWER,
        note="",
        user=users["owner"],
    )

    # c0: alice, lab1, lab2 count (3 of 3); c1: alice, lab1 (2 of 3). The model rater, the
    # adjudicator, the excluded and the flagged participant count nowhere.
    assert item_progress(study) == {"items": 2, "items_complete": 1, "responses": 5, "responses_wanted": 6}
    assert human_answers(study).count() == annotator_responses(study).count() == 5
    assert not quota_reached(study) and not study_is_full(study)
    api = client_for("owner")
    assert [
        i["external_id"] for i in api.get("/api/v1/studies/counted/items/?complete=true").json()["results"]
    ] == ["c0"]
    short = api.get("/api/v1/studies/counted/items/?complete=false").json()["results"]
    assert [(i["external_id"], i["answered"]) for i in short] == [("c1", 2)]
    assert api.get("/api/v1/studies/counted/").json()["progress"]["responses"] == 5
    listed = api.get("/api/v1/studies/").json()["results"]
    assert [(s["slug"], s["response_count"]) for s in listed] == [("counted", 5)]
    owner = Client()
    owner.force_login(users["owner"])
    overview = owner.get("/research/s/counted/").content.decode()
    assert re.search(r'id="progress-responses">5 / 6<', overview)
    assert "Items complete</span><strong>1 / 2<" in overview
    admin = Client()
    admin.force_login(users["admin"])
    assert "5 / 6 (83%)" in admin.get("/admin/annotation/study/").content.decode()
    rows = computereports_json(study, "--population", "passed")
    assert report_row(rows, "progress.responses")["value"] == 5
    assert report_row(rows, "progress.items_complete")["value"] == 1
    assert report_row(rows, "progress.participants")["value"] == 3  # alice, lab1, lab2
    # The one open place goes to a newcomer, and their answer fills the study.
    newcomer = person(study, "newcomer")
    page = assign_next_item(participant=newcomer, study=study)
    assert page is not None and page.item.external_id == "c1"
    assert assign_next_item(participant=person(study, "late"), study=study) is None


def test_a_model_raters_answers_never_close_a_crowd_study(users):
    study = crowd_study(users)
    for name in ("h1", "h2"):
        answer_pages(study, person(study, name), ANSWER)
    model_answers_everything(study)
    assert item_progress(study)["items_complete"] == 0 and not quota_reached(study)
    # A third person arrives through the link: consent, two pages, and their last answer
    # fills the study, which closes itself then (and only then).
    browser = Client()
    entry = browser.get(f"/s/counted/?PROLIFIC_PID={prolific_id('third')}", follow=True)
    html = browser.post(entry.redirect_chain[-1][0], {"decision": "agree"}, follow=True).content.decode()
    assert "Submit and continue" in html
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE
    while "Submit and continue" in html:
        html = browser.post(
            task_action(html), {"label": "supports", "evidence": "0"}, follow=True
        ).content.decode()
    assert "DONE-123" in html
    study.refresh_from_db()
    assert study.status == Study.Status.CLOSED and study.closed_by_quota


def test_a_researchers_flag_and_unflag_move_answers_out_of_and_into_the_passed_reports(users, client_for):
    study = crowd_study(users)
    people = [person(study, name) for name in ("p1", "p2")]
    for participant in people:
        answer_pages(study, participant, ANSWER)
    api = client_for("owner")
    url = f"/api/v1/studies/counted/participants/{people[1].public_id}/"

    def passed() -> tuple[int, int]:
        rows = computereports_json(study, "--population", "passed")
        return report_row(rows, "progress.responses")["value"], human_answers(study).count()

    assert passed() == (4, 4)
    refused = api.patch(url, {"flag_reason": "copied"}, format="json")  # a reason alone flags nobody
    assert refused.status_code == 400 and "flag_reason" in refused.json()
    assert api.patch(url, {"flagged": True, "flag_reason": "copied"}, format="json").status_code == 200
    assert passed() == (2, 2)
    assert item_progress(study)["responses"] == 2
    assert api.patch(url, {"flagged": False}, format="json").json()["flagged"] is False
    assert passed() == (4, 4)
    assert item_progress(study)["responses"] == 4


def test_a_study_the_quota_closed_reopens_for_the_answers_that_stopped_counting(users, client_for):
    study = crowd_study(users, annotations_per_item=2)
    people = [person(study, name) for name in ("p1", "p2")]
    for participant in people:
        answer_pages(study, participant, ANSWER)
    change_study_status(study, status=Study.Status.CLOSED, by_quota=True)  # as the last answer does
    api = client_for("owner")
    answer = api.patch(
        f"/api/v1/studies/counted/participants/{people[0].public_id}/", {"excluded": True}, format="json"
    )
    assert answer.status_code == 200
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE
    newcomer = person(study, "newcomer")
    assert len(answer_pages(study, newcomer, ANSWER)) == 2  # exactly the two missing answers
    assert assign_next_item(participant=person(study, "late"), study=study) is None


def test_a_study_a_researcher_closed_stays_closed_and_a_reopened_full_study_stays_open(users):
    study = crowd_study(users, annotations_per_item=1)
    p1 = person(study, "p1")
    answer_pages(study, p1, ANSWER)
    change_study_status(study, status=Study.Status.CLOSED)  # the researcher's act
    flag_in_study(enrollment(study, p1), reason="copied")
    study.refresh_from_db()
    assert study.status == Study.Status.CLOSED  # not reopened: the researcher closed it
    unflag_in_study(enrollment(study, p1))
    change_study_status(study, status=Study.Status.LIVE)  # reopened while full
    # The next arrival is told the study is full, and the study stays as the researcher set it.
    late = Client().get(f"/s/counted/?PROLIFIC_PID={prolific_id('late')}", follow=True).content.decode()
    assert "I agree" not in late
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE


def test_another_researchers_flag_stays_in_their_study(users, client_for):
    mine = crowd_study(users)
    theirs = load_study_file(claim_study_file(slug="theirs", items=2), owner=users["other"]).study
    worker = person(mine, "shared-worker")
    Enrollment.objects.create(participant=worker, study=theirs, status=Enrollment.Status.ACTIVE)
    answer_pages(mine, worker, ANSWER)
    answer_pages(theirs, worker, ANSWER)
    url = f"/api/v1/studies/theirs/participants/{worker.public_id}/"
    assert (
        client_for("other")
        .patch(url, {"flagged": True, "flag_reason": "OTHER-PRIVATE"}, format="json")
        .status_code
        == 200
    )
    detail = client_for("owner").get(f"/api/v1/studies/counted/participants/{worker.public_id}/").json()
    assert (detail["flagged"], detail["flag_reason"]) == (False, "")
    owner = Client()
    owner.force_login(users["owner"])
    listing = owner.get("/research/s/counted/participants/").content.decode()
    assert "OTHER-PRIVATE" not in listing and ">flagged</span>" not in listing
    platform = owner.get("/research/s/counted/participants/for-prolific.csv").content.decode()
    row = next(csv.DictReader(io.StringIO(platform)))
    assert (row["PROLIFIC_PID"], row["status"], row["reason"]) == ("shared-worker", "not finished", "")
    assert human_answers(mine).count() == 2  # their answers here still count
    assert human_answers(theirs).count() == 0


def test_quality_compares_with_the_answers_that_count_only(users, client_for):
    study = crowd_study(users)
    people = [person(study, name) for name in ("p1", "p2")]
    answer_pages(study, people[0], ANSWER)
    answer_pages(study, people[1], {"label": "neutral", "evidence": []})
    judge = model_participant(JUDGE)
    items = Item.objects.filter(study=study)
    store_model_answers(study, judge, [ModelAnswer(item=i, raw="supports", answer=ANSWER) for i in items])
    rows = client_for("owner").get("/api/v1/studies/counted/participants/").json()["results"]
    first = next(row for row in rows if row["participant"] == people[0].public_id)
    # p1 is compared with p2 alone: per item the label and the first sentence differ, the
    # two unselected sentences agree. Were the model rater (who sides with p1) a voter, the
    # label and the first sentence would be ties and left out (4 compared, 4 agreed).
    assert (first["agreement"]["compared"], first["agreement"]["agreed"]) == (8, 4)


def test_the_study_list_and_the_admin_count_task_items_without_the_attention_checks(users, client_for):
    """One reader of "how many items" (``populations.items_per_study``) for the API's list and
    the admin's column: two task items, three attention checks."""
    load_study_file(claim_study_file(slug="checked", items=2, attention=3), owner=users["owner"])
    listed = client_for("owner").get("/api/v1/studies/").json()["results"]
    assert [(s["slug"], s["item_count"]) for s in listed] == [("checked", 2)]
    admin = Client()
    admin.force_login(users["admin"])
    listing = admin.get("/admin/annotation/study/").content.decode()
    assert re.search(r'<td class="field-item_count">2</td>', listing)
