"""Until roles land, sharing a study means reading and analysing it: every change and
deletion is its owner's (and admins'), through one rule (``access.can_change_study``).
A researcher the study is shared with is refused each state-changing research page (403,
nothing changed), and still reads every page and exports."""

from __future__ import annotations

import io
import json

import pytest
from django.test import Client

from annotation.models import Enrollment, Item, Response, Study
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.factories import ParticipantFactory, researcher_user
from tests.helpers.flow import answer_pages, start, task_action

pytestmark = pytest.mark.django_db

ANSWER = {"label": "supports", "evidence": [0]}
SLUG = "a-tamper"


@pytest.fixture
def alices_shared_study():
    """Alice's live study, shared with Bob: a crowd participant who answered, and Alice's
    own test run (she took part in her study)."""
    alice, bob = researcher_user("alice", password="pw-a"), researcher_user("bob", password="pw-b")
    study = load_study_file(claim_study_file(slug=SLUG, items=2), owner=alice).study
    study.shared_with.add(bob)
    crowd = ParticipantFactory(enrolled_in=study, source="prolific", platform_worker_id="PID-1")
    answer_pages(study, crowd, ANSWER)
    owner = browser(alice)
    owner.post(task_action(start(owner, SLUG)), {"label": "supports", "evidence": ["0"]})
    assert Enrollment.objects.filter(study=study, is_test=True).count() == 1
    return {"alice": alice, "bob": bob, "study": study, "crowd": crowd}


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def snapshot(study: Study) -> tuple:
    """What a change would move: the study's settings and status, its items, its answers
    and test runs, its participants' marks."""
    study.refresh_from_db()
    enrollments = Enrollment.objects.filter(study=study).order_by("pk")
    return (
        study.title,
        study.status,
        study.closed_at,
        sorted(Item.objects.filter(study=study).values_list("external_id", flat=True)),
        Response.objects.filter(study=study).count(),
        list(enrollments.values_list("status", "is_test", "flagged", "excluded", "accepted")),
    )


def study_file_upload() -> dict:
    data = claim_study_file(slug=SLUG, items=3, title="pwned", status="closed")
    upload = io.BytesIO(json.dumps(data).encode())
    upload.name = "study.json"
    return {"study_file": upload}


# (what, path, form) for every state-changing research page; {public_id} and {item} filled in.
CHANGES = [
    ("discard test answers", f"/research/s/{SLUG}/test-answers/discard/", {}),
    ("close", f"/research/s/{SLUG}/status/", {"status": "closed"}),
    ("edit in the builder", f"/research/s/{SLUG}/edit/", {"title": "pwned", "action": "save"}),
    ("flag", f"/research/s/{SLUG}/participants/{{public_id}}/", {"action": "flag", "reason": "no"}),
    ("exclude", f"/research/s/{SLUG}/participants/{{public_id}}/", {"action": "exclude"}),
    ("accept", f"/research/s/{SLUG}/participants/{{public_id}}/", {"action": "accept"}),
    ("mark returned", f"/research/s/{SLUG}/participants/{{public_id}}/", {"action": "return"}),
    ("adjudicate", f"/research/s/{SLUG}/adjudication/{{item}}/", {"label": "refutes", "evidence": ["0"]}),
    ("load a study file over it", "/research/studies/new/", "upload"),
]


@pytest.mark.parametrize(("what", "path", "form"), CHANGES, ids=[c[0] for c in CHANGES])
def test_a_shared_researcher_is_refused_every_change(alices_shared_study, what, path, form):
    study = alices_shared_study["study"]
    url = path.format(
        public_id=alices_shared_study["crowd"].public_id, item=Item.objects.filter(study=study).first().pk
    )
    before = snapshot(study)
    answer = browser(alices_shared_study["bob"]).post(url, study_file_upload() if form == "upload" else form)
    assert answer.status_code == 403, (what, answer.status_code, answer.content[:300])
    assert snapshot(study) == before


def test_the_builder_is_the_owners_to_open(alices_shared_study):
    assert browser(alices_shared_study["bob"]).get(f"/research/s/{SLUG}/edit/").status_code == 403
    assert browser(alices_shared_study["alice"]).get(f"/research/s/{SLUG}/edit/").status_code == 200


def test_the_owner_still_makes_each_change(alices_shared_study):
    alice = browser(alices_shared_study["alice"])
    assert alice.post(f"/research/s/{SLUG}/test-answers/discard/").status_code == 302
    assert not Enrollment.objects.filter(study=alices_shared_study["study"], is_test=True).exists()
    assert alice.post(f"/research/s/{SLUG}/status/", {"status": "closed"}).status_code == 302
    assert Study.objects.get(slug=SLUG).status == "closed"


READS = [
    f"/research/s/{SLUG}/",
    f"/research/s/{SLUG}/progress/",
    f"/research/s/{SLUG}/preview/",
    f"/research/s/{SLUG}/participants/",
    f"/research/s/{SLUG}/participants/{{public_id}}/",
    f"/research/s/{SLUG}/adjudication/",
    f"/research/s/{SLUG}/adjudication/{{item}}/",
    f"/research/s/{SLUG}/exports/",
    f"/research/s/{SLUG}/study-file/",
    f"/research/s/{SLUG}/dashboard/",
]


def test_a_shared_researcher_reads_every_page_without_the_owners_buttons(alices_shared_study):
    study = alices_shared_study["study"]
    bob = browser(alices_shared_study["bob"])
    item = Item.objects.filter(study=study).first().pk
    for path in READS:
        answer = bob.get(path.format(public_id=alices_shared_study["crowd"].public_id, item=item))
        assert answer.status_code == 200, path
    overview = bob.get(f"/research/s/{SLUG}/").content.decode()
    assert "shared-read-only" in overview
    for owners_button in ("discard-test-answers", "edit-in-builder", 'name="status"'):
        assert owners_button not in overview
    participant = bob.get(
        f"/research/s/{SLUG}/participants/{alices_shared_study['crowd'].public_id}/"
    ).content.decode()
    assert "review-actions" not in participant
    assert bob.post(f"/research/s/{SLUG}/exports/", {"format": "jsonl"}).status_code == 302
