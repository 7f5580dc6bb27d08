"""Review finding 8 (adversarial review): a study can require only an exam its owner may use.
Bob cannot attach alice's exam (the API, the upload page and the admin all refuse, with the
same answer as for an exam that does not exist); once alice shares her exam with him, he can."""

from __future__ import annotations

import copy
import io
import json

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from annotation.models import Response, Study
from tests.conftest import EXAMPLES
from tests.helpers.exams import exam_action
from tests.helpers.flow import start

pytestmark = pytest.mark.django_db

EXAM = json.loads((EXAMPLES / "simulation-exam.json").read_text())
STUDY = json.loads((EXAMPLES / "simulation.json").read_text())


@pytest.fixture
def researchers(django_user_model):
    group = Group.objects.get_or_create(name="researchers")[0]
    alice = django_user_model.objects.create_user("alice", password="pw-alice-1")
    bob = django_user_model.objects.create_user("bob", password="pw-bob-1")
    group.user_set.add(alice, bob)
    return alice, bob


def study_file(slug: str, qualification: str) -> dict:
    data = copy.deepcopy(STUDY)
    data.update(slug=slug, qualification=qualification, public=False)
    return data


def post(client, data):
    return client.post("/api/v1/studies/", data, content_type="application/json")


def test_another_researchers_exam_is_refused_like_a_missing_one(client, researchers):
    alice, bob = researchers
    client.force_login(alice)
    assert post(client, dict(copy.deepcopy(EXAM), slug="alice-exam")).status_code == 201

    client.force_login(bob)
    foreign = post(client, study_file("bob-sim", "alice-exam"))
    missing = post(client, study_file("bob-sim", "no-such-exam"))
    assert foreign.status_code == missing.status_code == 400
    assert "qualification" in foreign.json()
    assert foreign.json()["qualification"] == [
        message.replace("no-such-exam", "alice-exam") for message in missing.json()["qualification"]
    ]
    upload = io.BytesIO(json.dumps(study_file("bob-sim", "alice-exam")).encode())
    upload.name = "bob-sim.json"
    page = client.post("/research/studies/new/", {"study_file": upload})
    assert page.status_code == 400 and "qualification" in page.content.decode()
    assert not Study.objects.filter(slug="bob-sim").exists()

    client.force_login(alice)
    assert post(client, study_file("alice-sim", "alice-exam")).status_code == 201  # her own exam
    shared = client.patch(
        "/api/v1/studies/alice-exam/", {"shared_with": ["bob"]}, content_type="application/json"
    )
    assert shared.status_code == 200
    client.force_login(bob)
    assert post(client, study_file("bob-sim", "alice-exam")).status_code == 201  # shared with him now


def test_the_admin_refuses_an_exam_the_owner_cannot_use(client, researchers, django_user_model):
    alice, bob = researchers
    client.force_login(alice)
    assert post(client, dict(copy.deepcopy(EXAM), slug="alice-exam")).status_code == 201
    client.force_login(bob)
    bob_file = study_file("bob-sim", "")
    bob_file.pop("qualification")
    assert post(client, bob_file).status_code == 201
    bob_study = Study.objects.get(slug="bob-sim")
    alice_exam = Study.objects.get(slug="alice-exam").exam

    client.force_login(django_user_model.objects.create_superuser("root", "", "pw-root-1"))
    form = {
        field: value
        for field, value in {
            "slug": bob_study.slug,
            "title": bob_study.title,
            "kind": bob_study.kind,
            "status": bob_study.status,
            "owner": bob.pk,
            "qualification": alice_exam.pk,
            "config": json.dumps(bob_study.config),
            "annotations_per_item": bob_study.annotations_per_item,
            "items_per_session": bob_study.items_per_session,
        }.items()
    }
    page = client.post(f"/admin/annotation/study/{bob_study.pk}/change/", form)
    assert page.status_code == 200 and "can use" in page.content.decode()
    bob_study.refresh_from_db()
    assert bob_study.qualification_id is None


def make_live(*slugs: str) -> None:
    Study.objects.filter(slug__in=slugs).update(status=Study.Status.LIVE)


def test_unsharing_an_exam_detaches_it_from_the_other_researchers_studies(client, researchers):
    """N9: after alice stopped sharing her exam, bob's study still sent its participants
    through her questions (and her training feedback), storing their answers in her exam."""
    alice, bob = researchers
    client.force_login(alice)
    assert post(client, dict(copy.deepcopy(EXAM), slug="alice-exam")).status_code == 201
    assert post(client, study_file("alice-sim", "alice-exam")).status_code == 201
    share = {"shared_with": ["bob"]}
    assert (
        client.patch("/api/v1/studies/alice-exam/", share, content_type="application/json").status_code == 200
    )
    client.force_login(bob)
    assert post(client, study_file("bob-sim", "alice-exam")).status_code == 201
    client.force_login(alice)
    unshare = {"shared_with": []}
    assert (
        client.patch("/api/v1/studies/alice-exam/", unshare, content_type="application/json").status_code
        == 200
    )

    assert Study.objects.get(slug="bob-sim").qualification_id is None
    assert Study.objects.get(slug="alice-sim").qualification_id is not None  # her own keeps it
    make_live("bob-sim", "alice-sim")
    participant = Client()
    page = start(participant, "bob-sim")
    assert "Qualification quiz" not in page and "/exam/" not in page
    assert not Response.objects.filter(study__slug="alice-exam").exists()
    assert "Qualification quiz" in start(Client(), "alice-sim")


def test_a_closed_exam_takes_no_answers(client, researchers):
    """N20: with the exam study closed, participants of a study requiring it were still asked
    its questions and their answers stored in it."""
    alice, _ = researchers
    client.force_login(alice)
    assert post(client, dict(copy.deepcopy(EXAM), slug="alice-exam")).status_code == 201
    assert post(client, study_file("alice-sim", "alice-exam")).status_code == 201
    make_live("alice-sim", "alice-exam")
    midway = Client()
    action = exam_action(start(midway, "alice-sim"))
    Study.objects.filter(slug="alice-exam").update(status=Study.Status.CLOSED)

    refused = midway.post(action, {"choice": "yes"})
    assert refused.status_code == 410 and b"no longer takes answers" in refused.content
    assert midway.get("/s/alice-sim/exam/").status_code == 410
    newcomer = Client()
    consent = newcomer.get("/s/alice-sim/", follow=True).redirect_chain[-1][0]
    assert newcomer.post(consent, follow=True).status_code == 410
    assert not Response.objects.filter(study__slug="alice-exam").exists()
