"""Every operation of our OpenAPI document, called as the study's owner once with valid input
and once with one bad input: the status must be one the schema documents for it, the content
type one it names, and a JSON body must fit the documented schema (API conformance review:
HTML 404s for path values the URL converter refuses, export types, ``completion_url``, the
token's 429, page and filter values that were silently ignored, trimmed over-long fields,
study-less jobs, the ``Idempotency-Key`` length).

A new operation fails ``test_every_operation_has_a_valid_and_a_bad_case`` until it gets its
cases here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import TestCase, override_settings
from rest_framework.test import APIClient

from annotation.models import Job, Response
from annotation.services.authoring.studies import load_study_file
from annotation.services.jobs import start_job
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from tests.conftest import claim_study_file
from tests.factories import ParticipantFactory
from tests.helpers.module_data import rows_for_the_module

from .conftest import create_owned_study, create_tokens, create_users
from .openapi import check_body, openapi

pytestmark = pytest.mark.django_db
TEMPLATE_URL = "https://app.prolific.com/submissions/complete?cc={code}"
ITEM_LINE = json.dumps({"external_id": "new-1", "payload": {"claim": "C.", "sentences": ["S."]}})

S = "/api/v1/studies/owned"
P = S + "/participants/{public_id}/"


def req(path: str, body=None, *, ct: str | None = None, key: str | None = None, role: str = "owner") -> tuple:
    """A request: path with {placeholders}, body (JSON unless ``ct``), Idempotency-Key, role."""
    headers = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    return (path, body, ct, headers, role)


TOKEN = "/api/v1/auth/token/"
# (method, path template) → (valid request, (bad request, expected status)).
CASES: dict[tuple[str, str], tuple[tuple, tuple]] = {
    ("POST", TOKEN): (
        req(TOKEN, {"username": "owner", "password": "pw-owner-1"}, role="anonymous"),
        (req(TOKEN, {"username": "owner"}, role="anonymous"), 400),
    ),
    ("GET", "/api/v1/job-kinds/"): (
        req("/api/v1/job-kinds/"),
        (req("/api/v1/job-kinds/", role="anonymous"), 401),
    ),
    ("GET", "/api/v1/jobs/"): (
        req("/api/v1/jobs/?kind=export"),
        (req("/api/v1/jobs/?kind="), 400),
    ),
    ("POST", "/api/v1/jobs/"): (
        req("/api/v1/jobs/", {"kind": "export", "study": "owned", "parameters": {"format": "csv"}}),
        (req("/api/v1/jobs/", {"kind": "reports", "study": None}), 400),
    ),
    ("GET", "/api/v1/jobs/{job_id}/"): (
        req("/api/v1/jobs/{queued}/"),
        (req("/api/v1/jobs/-1/"), 404),
    ),
    ("POST", "/api/v1/jobs/{job_id}/cancel/"): (
        req("/api/v1/jobs/{queued}/cancel/"),
        (req("/api/v1/jobs/{queued}/cancel/", key=""), 400),
    ),
    ("GET", "/api/v1/responses/"): (
        req("/api/v1/responses/?study=owned&page_size=10"),
        (req("/api/v1/responses/?until="), 400),
    ),
    ("GET", "/api/v1/studies/"): (
        req("/api/v1/studies/?page=1&page_size=5"),
        (req("/api/v1/studies/?page_size=abc"), 400),
    ),
    ("POST", "/api/v1/studies/"): (
        req("/api/v1/studies/", claim_study_file(slug="conformance-new", items=2)),
        (req("/api/v1/studies/", b'{"slug": "x", "title": "a\\u0000b"}', ct="application/json"), 400),
    ),
    ("GET", "/api/v1/studies/{slug}/"): (
        req(S + "/"),
        (req("/api/v1/studies/%28/"), 404),
    ),
    ("PATCH", "/api/v1/studies/{slug}/"): (
        req(S + "/", {"title": "Renamed", "completion_url": TEMPLATE_URL}),
        (req(S + "/", {"annotations_per_item": "many"}), 400),
    ),
    ("GET", "/api/v1/studies/{slug}/exports/"): (
        req(S + "/exports/"),
        (req(S + "/exports/?page=0"), 400),
    ),
    ("POST", "/api/v1/studies/{slug}/exports/"): (
        req(S + "/exports/", {"format": "jsonl"}),
        (req(S + "/exports/", {"format": "\ud800"}), 400),
    ),
    ("GET", "/api/v1/studies/{slug}/exports/{export_id}/"): (
        req(S + "/exports/{export}/"),
        (req(S + "/exports/1.5/"), 404),
    ),
    ("GET", "/api/v1/studies/{slug}/exports/{export_id}/download/"): (
        req(S + "/exports/{export}/download/"),
        (req(S + "/exports/{queued}/download/"), 409),
    ),
    ("GET", "/api/v1/studies/{slug}/items/"): (
        req(S + "/items/?complete=false"),
        (req(S + "/items/?system="), 400),
    ),
    ("POST", "/api/v1/studies/{slug}/items/"): (
        req(S + "/items/", ITEM_LINE.encode(), ct="application/x-ndjson"),
        (req(S + "/items/", b'{"external_id": NaN}', ct="application/x-ndjson"), 400),
    ),
    ("GET", "/api/v1/studies/{slug}/participants/"): (
        req(S + "/participants/"),
        (req(S + "/participants/?page_size=0"), 400),
    ),
    ("GET", "/api/v1/studies/{slug}/participants/{public_id}/"): (
        req(P),
        (req(S + "/participants/nobody/"), 404),
    ),
    ("PATCH", "/api/v1/studies/{slug}/participants/{public_id}/"): (
        req(P, {"flagged": True, "flag_reason": " spam"}),
        (req(P, {"flag_reason": " " + "x" * 200}), 400),
    ),
    ("POST", "/api/v1/studies/{slug}/participants/{public_id}/erase/"): (
        req(P + "erase/", {"confirm": True}),
        (req(S + "/participants/nobody/erase/", {"confirm": True}), 404),  # (the fuzz test sends 400s)
    ),
    ("POST", "/api/v1/studies/{slug}/participants/returned/"): (
        req(S + "/participants/returned/", {"participants": ["{public_id}"]}),
        (req(S + "/participants/returned/", {"participants": ["nobody"]}), 400),
    ),
    ("GET", "/api/v1/studies/{slug}/reports/"): (
        req(S + "/reports/"),
        (req(S + "/reports/?metric="), 400),
    ),
    ("POST", "/api/v1/studies/{slug}/freeze/"): (
        req("/api/v1/studies/drafted/freeze/", {"analysis_plan": {"populations": ["passed", "all"]}}),
        (req(S + "/freeze/", {"analysis_plan": {"populations": ["passed"]}}), 400),  # live: too late
    ),
    ("GET", "/api/v1/studies/{slug}/versions/"): (
        req(S + "/versions/"),
        (req(S + "/versions/?page=0"), 400),
    ),
    ("GET", "/api/v1/studies/{slug}/versions/{number}/study-file/"): (
        req(S + "/versions/1/study-file/"),
        (req(S + "/versions/99/study-file/"), 404),
    ),
    ("POST", "/api/v1/studies/{slug}/status/"): (
        req(S + "/status/", {"status": "closed"}, key="k" * 255),
        (req(S + "/status/", {"status": "closed"}, key="k" * 256), 400),
    ),
}


@pytest.fixture(scope="module")
def module_world(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[dict]:
    """The users (each with an API token), the owned study (with a URL-template completion
    link), one answered page, a finished export and a queued one, and a draft study, written
    once for the module (tests/helpers/module_data.py): each test's own transaction rolls
    back what its cases change. No case touches the export's file (an erasure deletes files
    only after a commit), so it is shared too, in a directory of the module's own."""
    with (
        override_settings(EXPORT_DIR=tmp_path_factory.mktemp("exports")),
        rows_for_the_module(django_db_blocker),
    ):
        users = create_users(get_user_model())
        owned_study = create_owned_study(users["owner"])
        owned_study.completion_url = TEMPLATE_URL
        owned_study.save(update_fields=["completion_url"])
        participant = ParticipantFactory(
            enrolled_in=owned_study, source="prolific", platform_worker_id="PID-1"
        )
        submit_response(
            assignment=assign_next_item(participant=participant, study=owned_study),
            answer={"label": "supports", "evidence": [0]},
        )
        with TestCase.captureOnCommitCallbacks(execute=True):
            export = start_job(
                kind="export", parameters={"format": "csv"}, study=owned_study, user=users["owner"]
            )
        queued = Job.objects.create(
            kind="export", parameters={"format": "csv"}, study=owned_study, created_by=users["owner"]
        )
        assert Response.objects.exists()
        load_study_file(claim_study_file(slug="drafted", items=2, status="draft"), owner=users["owner"])
        yield {
            "tokens": create_tokens(users),
            "values": {
                "public_id": participant.public_id,
                "export": str(export.pk),
                "queued": str(queued.pk),
            },
        }


@pytest.fixture
def tokens(module_world):
    """The API token of each of the module's users, by role."""
    return module_world["tokens"]


@pytest.fixture
def world(module_world):
    """What fills the ``{public_id}``-style parts of the cases' paths; the token's rate limit
    starts afresh."""
    cache.clear()
    return module_world["values"]


def client_as(role: str, tokens) -> APIClient:
    client = APIClient()
    if role != "anonymous":
        client.credentials(HTTP_AUTHORIZATION=f"Token {tokens[role]}")
    return client


def fill(value, values: dict):
    """The request with its ``{placeholders}`` replaced."""
    if isinstance(value, str):
        return re.sub(r"\{(public_id|export|queued)\}", lambda m: values[m.group(1)], value)
    if isinstance(value, (list, tuple)):
        return type(value)(fill(v, values) for v in value)
    if isinstance(value, dict):
        return {k: fill(v, values) for k, v in value.items()}
    return value


def send(request: tuple, method: str, values: dict, tokens):
    path, body, content_type, headers, role = fill(request, values)
    if body is not None and content_type is None:
        body, content_type = json.dumps(body).encode(), "application/json"
    return client_as(role, tokens).generic(method, path, body or b"", content_type=content_type, **headers)


def assert_conforms(method: str, template: str, answer) -> None:
    """The answer's status, content type and JSON body are the ones the schema documents."""
    responses = openapi()["paths"][template][method.lower()]["responses"]
    status = str(answer.status_code)
    assert status in responses, f"{method} {template}: {status} is not documented"
    content = responses[status].get("content", {})
    media_type = answer.get("Content-Type", "").split(";")[0].strip()
    if not content:
        return
    assert media_type in content, f"{method} {template} {status}: {media_type} is not documented"
    schema = content[media_type].get("schema")
    if media_type == "application/json" and schema is not None:
        check_body(schema, answer.json())


def documented_operations() -> set[tuple[str, str]]:
    return {
        (method.upper(), template)
        for template, methods in openapi()["paths"].items()
        for method in methods
        if method in ("get", "post", "put", "patch", "delete")
    }


def test_every_operation_has_a_valid_and_a_bad_case():
    assert documented_operations() == set(CASES)


@pytest.mark.parametrize(("method", "template"), sorted(CASES), ids=lambda v: v)
def test_each_operation_answers_as_documented(world, tokens, method, template):
    valid, (bad, expected) = CASES[(method, template)]
    answer = send(valid, method, world, tokens)
    assert answer.status_code < 300, (method, template, answer.status_code, answer.content[:300])
    assert_conforms(method, template, answer)
    refused = send(bad, method, world, tokens)
    assert refused.status_code == expected, (method, template, refused.status_code, refused.content[:300])
    assert_conforms(method, template, refused)


def test_the_token_limit_answers_a_documented_429(tokens, settings):
    cache.clear()
    settings.RATE_LIMIT_TOKEN = "1/min"
    request = req(TOKEN, {"username": "owner", "password": "nope"}, role="anonymous")
    assert send(request, "POST", {}, tokens).status_code == 400
    throttled = send(request, "POST", {}, tokens)
    assert throttled.status_code == 429 and throttled["Retry-After"]
    assert_conforms("POST", "/api/v1/auth/token/", throttled)
    cache.clear()


def test_an_api_path_no_route_matches_is_a_json_404(tokens):
    for path in ("/api/v1/studies/%28/", "/api/v1/jobs/-1/", "/api/v1/no-such-thing/"):
        for role in ("owner", "anonymous"):
            answer = client_as(role, tokens).get(path)
            assert answer.status_code == 404 and answer["Content-Type"] == "application/json"
            assert answer.json() == {"detail": "Not found."}
    assert "text/html" in APIClient().get("/no-such-page/")["Content-Type"]
