"""Review finding 19 (adversarial review): the API and the upload page never tell bob more
about alice's study than its public link does. A file with alice's slug is checked as if the
slug were free (the same errors for a bad file), and a good file gets one "slug is taken" that
says nothing else."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from annotation.models import Study
from tests.conftest import claim_study_file

pytestmark = pytest.mark.django_db
NOT_AVAILABLE = "This slug is not available; choose another."


@pytest.fixture
def bob(client, django_user_model):
    group = Group.objects.get_or_create(name="researchers")[0]
    alice = django_user_model.objects.create_user("alice", password="pw-alice-1")
    bob = django_user_model.objects.create_user("bob", password="pw-bob-1")
    group.user_set.add(alice, bob)
    client.force_login(alice)
    assert post(client, claim_study_file(slug="alice-claims")).status_code == 201
    client.force_login(bob)
    return bob


def post(client, data):
    return client.post("/api/v1/studies/", data, content_type="application/json")


def upload(client, data):
    upload = io.BytesIO(json.dumps(data).encode())
    upload.name = "study.json"
    return client.post("/research/studies/new/", {"study_file": upload})


def upload_errors(page) -> str:
    html = page.content.decode()
    start = html.index('id="upload-errors"')
    return html[start : html.index("</div>", start)]


def bad_file(slug: str) -> dict:
    data = claim_study_file(slug=slug)
    data["items"][0]["payload"] = {"claim": 5}
    return data


def test_a_bad_file_with_a_taken_slug_gets_the_errors_of_a_free_slug(client, bob):
    taken, free = post(client, bad_file("alice-claims")), post(client, bad_file("free-slug"))
    assert taken.status_code == free.status_code == 400
    assert taken.json() == free.json() and "slug" not in taken.json()
    page_taken, page_free = upload(client, bad_file("alice-claims")), upload(client, bad_file("free-slug"))
    assert page_taken.status_code == page_free.status_code == 400
    assert upload_errors(page_taken) == upload_errors(page_free) and "slug" not in upload_errors(page_taken)


def test_a_good_file_with_a_taken_slug_is_told_only_that_it_is_taken(client, bob):
    answer = post(client, claim_study_file(slug="alice-claims"))
    assert answer.status_code == 400 and answer.json() == {"slug": [NOT_AVAILABLE]}
    page = upload(client, claim_study_file(slug="alice-claims"))
    assert page.status_code == 400 and NOT_AVAILABLE in page.content.decode()
    assert "researcher" not in page.content.decode().split(NOT_AVAILABLE)[1][:200]
    assert Study.objects.get(slug="alice-claims").owner.username == "alice"


@pytest.mark.parametrize("status", [Study.Status.DRAFT, Study.Status.CLOSED])
def test_a_slug_of_a_study_nobody_else_can_see_gets_the_answer_of_a_public_one(client, bob, status):
    """Review 2, N17: a draft's slug (its /s/ link is a 404 to bob) is refused with the same
    words, byte for byte, as a live study's, on the API and on the upload page: the answer
    says the slug is not available, never whose it is nor in what state."""
    Study.objects.create(slug="alice-hidden", title="Hidden", kind="claim", status=status)
    assert Client().get("/s/alice-hidden/").status_code in (404, 410)  # no page to see
    hidden, public = (
        post(client, claim_study_file(slug="alice-hidden")),
        post(client, claim_study_file(slug="alice-claims")),
    )
    assert hidden.status_code == public.status_code == 400
    assert hidden.json() == public.json() == {"slug": [NOT_AVAILABLE]}
    page_hidden = upload(client, claim_study_file(slug="alice-hidden"))
    page_public = upload(client, claim_study_file(slug="alice-claims"))
    assert upload_errors(page_hidden) == upload_errors(page_public)
    assert "taken" not in upload_errors(page_hidden)
