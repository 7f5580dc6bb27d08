"""The permission matrix: every endpoint × anonymous, participant, other researcher, a
researcher the study is shared with, owner, admin. Sharing means reading and analysing
(``access.can_change_study``): every change and deletion is the owner's (and admins')."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, TestCase, override_settings

from annotation.models import Job, Response, Study
from annotation.services.jobs import start_job
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from tests.conftest import claim_study_file
from tests.factories import ParticipantFactory, researcher_user
from tests.helpers.module_data import rows_for_the_module

from .conftest import ROLES as BASE_ROLES
from .conftest import create_owned_study, create_users

# "shared": a researcher the study is shared with (its owner's collaborator, no owner's rights).
ROLES = [*BASE_ROLES, "shared"]

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def module_world(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[dict]:
    """The users, a study with one answered page, and a finished export of it, written once
    for the module (tests/helpers/module_data.py): about 130 tests read them, and the few
    that write (renaming, closing, excluding, new items and jobs) change rows only, which
    their own transaction rolls back. No endpoint here touches the export's file, so it
    is shared too, in a directory of the module's own: the primary keys of it all."""
    with (
        override_settings(EXPORT_DIR=tmp_path_factory.mktemp("exports")),
        rows_for_the_module(django_db_blocker),
    ):
        users = create_users(get_user_model())
        users["shared"] = researcher_user("shared", password="pw-shared-1")
        study = create_owned_study(users["owner"])
        study.shared_with.add(users["shared"])
        participant = ParticipantFactory(enrolled_in=study, source="prolific", platform_worker_id="PID-1")
        assignment = assign_next_item(participant=participant, study=study)
        submit_response(assignment=assignment, answer={"label": "supports", "evidence": [0]})
        with TestCase.captureOnCommitCallbacks(execute=True):
            export = start_job(kind="export", parameters={"format": "csv"}, study=study, user=users["owner"])
        export.refresh_from_db()
        assert export.status == Job.Status.DONE
        yield {
            "users": {role: user.pk for role, user in users.items()},
            "public_id": participant.public_id,
            "export": export.pk,
        }


@pytest.fixture
def users(module_world, django_user_model):
    """The module's users, fetched afresh for each test (overrides tests/api/conftest.py's)."""
    return {role: django_user_model.objects.get(pk=pk) for role, pk in module_world["users"].items()}


@pytest.fixture
def world(module_world, users):
    """What the endpoints' paths name: the participant's public id and the export's key."""
    return {"public_id": module_world["public_id"], "export": module_world["export"]}


def study_file(slug: str) -> dict:
    return claim_study_file(slug=slug, items=1)


def item_line() -> str:
    return json.dumps({"external_id": "new-1", "payload": {"claim": "A claim.", "sentences": ["One."]}})


def scoped(success: int, shared: int | None = None) -> dict:
    """An endpoint on the study: its owner and admins succeed, and the researcher it is
    shared with too unless ``shared`` says otherwise (a change: 403)."""
    return {
        "anonymous": 401,
        "participant": 403,
        "other": 404,
        "shared": shared or success,
        "owner": success,
        "admin": success,
    }


def owners(success: int) -> dict:
    """A change of the study: the owner's and admins'; 403 to a researcher it is shared with."""
    return scoped(success, shared=403)


def open_to_researchers(success: int, other: int | None = None) -> dict:
    return {
        "anonymous": 401,
        "participant": 403,
        "other": other or success,
        "shared": success,
        "owner": success,
        "admin": success,
    }


# (method, path, body or None, content type, expected status per role)
ENDPOINTS = [
    ("get", "/api/v1/studies/", None, None, open_to_researchers(200)),
    ("post", "/api/v1/studies/", study_file("fresh"), "json", open_to_researchers(201)),
    ("get", "/api/v1/studies/owned/", None, None, scoped(200)),
    ("patch", "/api/v1/studies/owned/", {"title": "Renamed"}, "json", owners(200)),
    ("post", "/api/v1/studies/owned/status/", {"status": "closed"}, "json", owners(200)),
    ("get", "/api/v1/studies/owned/items/", None, None, scoped(200)),
    ("post", "/api/v1/studies/owned/items/", item_line(), "application/x-ndjson", owners(200)),
    ("get", "/api/v1/studies/owned/participants/", None, None, scoped(200)),
    ("get", "/api/v1/studies/owned/participants/{public_id}/", None, None, scoped(200)),
    ("patch", "/api/v1/studies/owned/participants/{public_id}/", {"excluded": True}, "json", owners(200)),
    ("post", "/api/v1/studies/owned/participants/{public_id}/erase/", {"confirm": True}, "json", owners(200)),
    (
        "post",
        "/api/v1/studies/owned/participants/returned/",
        {"participants": ["PID-1"]},
        "json",
        owners(200),
    ),
    ("get", "/api/v1/studies/owned/reports/", None, None, scoped(200)),
    ("get", "/api/v1/studies/owned/versions/", None, None, scoped(200)),
    ("get", "/api/v1/studies/owned/versions/1/study-file/", None, None, scoped(200)),
    ("get", "/api/v1/studies/owned/exports/", None, None, scoped(200)),
    ("post", "/api/v1/studies/owned/exports/", {"format": "jsonl"}, "json", scoped(202)),
    # Raw platform ids (access.can_see_platform_ids): the owner and admins.
    (
        "post",
        "/api/v1/studies/owned/exports/",
        {"format": "csv", "include_platform_ids": True},
        "json",
        scoped(202, shared=400),
    ),
    ("get", "/api/v1/studies/owned/exports/{export}/", None, None, scoped(200)),
    ("get", "/api/v1/studies/owned/exports/{export}/download/", None, None, scoped(200)),
    ("get", "/api/v1/responses/", None, None, open_to_researchers(200)),
    ("get", "/api/v1/jobs/", None, None, open_to_researchers(200)),
    ("get", "/api/v1/job-kinds/", None, None, open_to_researchers(200)),
    (
        "post",
        "/api/v1/jobs/",
        {"kind": "export", "study": "owned", "parameters": {"format": "csv"}},
        "json",
        open_to_researchers(201, other=400),
    ),
    (
        "post",
        "/api/v1/jobs/",
        {"kind": "export", "study": "owned", "parameters": {"format": "csv", "include_platform_ids": True}},
        "json",
        {**open_to_researchers(201, other=400), "shared": 400},
    ),
    # A kind that writes into the study (model answers): the owner's; the gate comes before
    # the parameters' check, so the others' answers say nothing about them.
    (
        "post",
        "/api/v1/jobs/",
        {"kind": "rate_llm", "study": "owned", "parameters": {}},
        "json",
        {**open_to_researchers(400), "shared": 403},
    ),
    ("get", "/api/v1/jobs/{export}/", None, None, scoped(200)),
    ("post", "/api/v1/jobs/{export}/cancel/", None, "json", owners(200)),
]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("method", "path", "body", "content_type", "expected"), ENDPOINTS)
def test_permission_matrix(world, client_for, role, method, path, body, content_type, expected):
    url = path.format(**world)
    client = client_for(role)
    if content_type == "json":
        response = getattr(client, method)(url, body, format="json")
    elif content_type:
        response = getattr(client, method)(url, body, content_type=content_type)
    else:
        response = getattr(client, method)(url)
    assert response.status_code == expected[role], (role, method, url, response.content[:300])


@pytest.mark.parametrize("path", ["/api/v1/studies/", "/api/v1/responses/", "/api/v1/jobs/"])
def test_lists_show_another_researcher_nothing_of_the_study(world, client_for, path):
    assert client_for("other").get(path).json()["results"] == []
    assert client_for("owner").get(path).json()["results"] != []


def test_a_shared_study_is_reachable_and_sharing_stays_with_the_owner(world, client_for, users):
    other = client_for("other")
    assert other.get("/api/v1/studies/owned/").status_code == 404
    shared = client_for("owner").patch("/api/v1/studies/owned/", {"shared_with": ["other"]}, format="json")
    assert shared.json()["shared_with"] == ["other"]
    assert other.get("/api/v1/studies/owned/").status_code == 200
    assert other.patch("/api/v1/studies/owned/", {"title": "Ours"}, format="json").status_code == 403
    refused = other.patch("/api/v1/studies/owned/", {"shared_with": []}, format="json")
    assert refused.status_code == 403
    study = Study.objects.get(slug="owned")
    assert study.title != "Ours"
    assert list(study.shared_with.values_list("username", flat=True)) == ["other"]
    assert Response.objects.filter(study__slug="owned").count() == 1


def test_token_endpoint_serves_researchers_only(users, client_for):
    client = client_for("anonymous")

    def ask(username, password):
        return client.post("/api/v1/auth/token/", {"username": username, "password": password}, format="json")

    answer = ask("owner", "pw-owner-1")
    assert answer.status_code == 200 and len(answer.json()["token"]) == 40
    refused, wrong = ask("participant", "pw-part-1"), ask("owner", "wrong")
    assert refused.status_code == wrong.status_code == 400 and refused.json() == wrong.json()


def test_session_login_works_for_the_browser(users, client):
    client.force_login(users["owner"])
    assert client.get("/api/v1/studies/").status_code == 200


# Who sees a participant's raw platform id in the API (access.can_see_platform_ids).
PLATFORM_ID_SEEN = {"shared": False, "owner": True, "admin": True}


@pytest.mark.parametrize("role", list(PLATFORM_ID_SEEN))
def test_platform_ids_are_the_owners_and_admins_everywhere(world, client_for, users, role):
    """One rule on the API, the platform list and exports: a researcher the study is shared
    with reaches the study but sees pseudonyms only."""
    from annotation.models import Study

    Study.objects.get(slug="owned").shared_with.add(users["other"])
    client = client_for("other" if role == "shared" else role)
    seen = PLATFORM_ID_SEEN[role]
    detail = client.get("/api/v1/studies/owned/participants/{public_id}/".format(**world)).json()
    assert (detail["platform_worker_id"] == "PID-1") is seen
    listed = client.get("/api/v1/studies/owned/participants/").json()["results"]
    assert [row["platform_worker_id"] for row in listed] == (["PID-1"] if seen else [None])
    body = {"format": "csv", "include_platform_ids": True}
    export = client.post("/api/v1/studies/owned/exports/", body, format="json")
    assert export.status_code == (202 if seen else 400)
    browser = Client()
    browser.force_login(users["other" if role == "shared" else role])
    assert browser.get("/research/s/owned/participants/for-prolific.csv").status_code == (
        200 if seen else 404
    )


def test_an_owner_who_left_the_researchers_group_manages_nothing(world, client_for, users):
    """can_manage_study is researcher_studies: a former researcher neither reaches their
    study in the API nor previews it as a draft through the participant pages."""
    from annotation.models import Study
    from annotation.services.access import can_manage_study, can_see_platform_ids

    study = Study.objects.get(slug="owned")
    study.status = Study.Status.DRAFT
    study.save(update_fields=["status"])
    owner = users["owner"]
    browser = Client()
    browser.force_login(owner)
    assert browser.get("/s/owned/").status_code == 302  # on to the consent page of their preview
    owner.groups.clear()
    assert not can_manage_study(owner, study) and not can_see_platform_ids(owner, study)
    assert client_for("owner").get("/api/v1/studies/owned/").status_code == 403
    assert browser.get("/s/owned/").status_code == 404


def _state_of_the_study() -> tuple:
    """What a change through the API would move: the study, its items, its participants'
    marks and returns, its jobs."""
    from annotation.models import Enrollment, Item

    study = Study.objects.get(slug="owned")
    return (
        study.title,
        study.status,
        study.closed_at,
        Item.objects.filter(study=study).count(),
        list(Enrollment.objects.filter(study=study).values_list("status", "flagged", "excluded")),
        list(Job.objects.filter(study=study).order_by("pk").values_list("kind", "status", "message")),
    )


SHARED_REFUSED = [endpoint for endpoint in ENDPOINTS if endpoint[4]["shared"] == 403]


@pytest.mark.parametrize(("method", "path", "body", "content_type", "expected"), SHARED_REFUSED)
def test_a_shared_researcher_changes_nothing_through_the_api(
    world, client_for, method, path, body, content_type, expected
):
    before = _state_of_the_study()
    client = client_for("shared")
    url = path.format(**world)
    if content_type == "json":
        answer = getattr(client, method)(url, body, format="json")
    else:
        answer = getattr(client, method)(url, body, content_type=content_type)
    assert answer.status_code == 403
    assert _state_of_the_study() == before
