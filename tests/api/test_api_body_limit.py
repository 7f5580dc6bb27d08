"""Review finding 10 (adversarial review): API JSON bodies over Django's
DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB) got Django's HTML "Bad Request (400)", although
docs/api.md promises bodies up to API_MAX_UPLOAD_BYTES and a 413 beyond. The JSON parser now
reads the stream itself: the documented bound holds, and a larger body is a JSON 413 that
writes nothing."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from annotation.models import Study
from tests.conftest import claim_study_file
from tests.helpers.uploads import row_counts

pytestmark = pytest.mark.django_db
THREE_MIB = 3 * 1024 * 1024


def padded_study_file(slug: str, size: int) -> str:
    """A valid study file of ``size`` bytes (JSON allows any amount of whitespace)."""
    text = json.dumps(claim_study_file(slug=slug, items=3))
    return text[:-1] + " " * (size - len(text)) + "}"


@pytest.mark.parametrize("headers", [{}, {"HTTP_IDEMPOTENCY_KEY": "big-file"}])
def test_a_json_body_over_django_s_memory_limit_is_read(client_for, users, headers):
    assert THREE_MIB > settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    answer = client_for("owner").post(
        "/api/v1/studies/", padded_study_file("big", THREE_MIB), content_type="application/json", **headers
    )
    assert answer.status_code == 201 and answer.json()["slug"] == "big"
    assert Study.objects.get(slug="big").items.count() == 3


@pytest.mark.parametrize("headers", [{}, {"HTTP_IDEMPOTENCY_KEY": "too-big"}])
def test_a_body_over_the_documented_limit_is_a_json_413(client_for, users, settings, headers):
    settings.API_MAX_UPLOAD_BYTES = 1024 * 1024
    before = row_counts()
    answer = client_for("owner").post(
        "/api/v1/studies/",
        padded_study_file("too-big", 2 * 1024 * 1024),
        content_type="application/json",
        **headers,
    )
    assert answer.status_code == 413 and answer["Content-Type"] == "application/json"
    assert answer.json() == {"detail": "The request body is larger than this API accepts."}
    assert row_counts() == before
