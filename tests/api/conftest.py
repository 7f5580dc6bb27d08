"""API fixtures: the five roles of the permission matrix, and clients that check the schema."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Participant, Study
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.helpers.module_data import fetched_by_key, rows_for_the_module

from .openapi import validate

ROLES = ["anonymous", "participant", "other", "owner", "admin"]


class CheckedClient(APIClient):
    """An API client whose every JSON answer is validated against the OpenAPI schema."""

    def generic(self, method, path, *args, **kwargs):
        response = super().generic(method, path, *args, **kwargs)
        if path.startswith("/api/v1/") and response.get("Content-Type", "").startswith("application/json"):
            validate(path.split("?")[0], method, response.status_code, response.json())
        return response


def create_users(user_model) -> dict:
    """The four users behind the roles (anonymous has none), by role."""
    researchers = Group.objects.get_or_create(name="researchers")[0]
    owner = user_model.objects.create_user("owner", password="pw-owner-1")
    other = user_model.objects.create_user("other", password="pw-other-1")
    owner.groups.add(researchers)
    other.groups.add(researchers)
    participant = user_model.objects.create_user("participant", password="pw-part-1")
    Participant.objects.create(user=participant)
    admin = user_model.objects.create_superuser("admin", "admin@example.org", "pw-admin-1")
    return {"owner": owner, "other": other, "participant": participant, "admin": admin}


def create_tokens(users: dict) -> dict[str, str]:
    """An API token for each of ``users`` (by role): the key by role."""
    return {role: Token.objects.create(user=user).key for role, user in users.items()}


# A module whose tests only read the users and the owned study, or change rows their own
# transaction rolls back, sets this to True: they are written once for it (``module_owned``).
ROWS_FOR_THE_MODULE = "ROWS_FOR_THE_MODULE"


@pytest.fixture
def users(module_owned, django_user_model):
    """The four users by role: the module's, fetched afresh, where it has its own, else new."""
    if module_owned is None:
        return create_users(django_user_model)
    return fetched_by_key(django_user_model, module_owned["users"])


@pytest.fixture
def client_for(users):
    """A schema-checking client authenticated as a role (by token; anonymous has none)."""

    def make(role: str) -> CheckedClient:
        key = None if role == "anonymous" else Token.objects.get_or_create(user=users[role])[0].key
        return client_with_token(key)

    return make


def client_with_token(key: str | None) -> CheckedClient:
    """A schema-checking client sending API token ``key`` (None: anonymous)."""
    client = CheckedClient()
    if key is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def create_owned_study(owner) -> Study:
    """A live claim study owned by ``owner``."""
    return load_study_file(claim_study_file(slug="owned", items=4), owner=owner).study


@pytest.fixture
def owned_study(module_owned, users):
    """A live claim study owned by ``owner``: the module's, fetched afresh, where it has its own."""
    if module_owned is None:
        return create_owned_study(users["owner"])
    return Study.objects.get(pk=module_owned["study"])


@pytest.fixture(scope="module")
def module_owned(request, django_db_setup, django_db_blocker) -> Iterator[dict | None]:
    """For a module that sets ``ROWS_FOR_THE_MODULE = True``: the users and the owned study
    written once for it (tests/helpers/module_data.py), as primary keys; None for any other.
    A module-scoped fixture in ``users``' and ``owned_study``'s closure, so the rows are written
    before a test's transaction begins, not inside it (rolled back after the first test)."""
    if not getattr(request.module, ROWS_FOR_THE_MODULE, False):
        yield None
        return
    with rows_for_the_module(django_db_blocker):
        users = create_users(get_user_model())
        study = create_owned_study(users["owner"])
        yield {"users": {role: user.pk for role, user in users.items()}, "study": study.pk}


@pytest.fixture
def api_ranking(client_for, users, example_study_file):
    """A ranking study (the example file) that ``owner`` created through the API."""
    data = example_study_file("ranking")
    data["slug"] = "api-ranking"
    assert client_for("owner").post("/api/v1/studies/", data, format="json").status_code == 201
    return Study.objects.get(slug="api-ranking")
