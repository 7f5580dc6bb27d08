"""Review 2, N15: a body sent with ``Transfer-Encoding: chunked`` and no ``Content-Length``
(which gunicorn decodes and passes on, ending ``wsgi.input`` itself) looked empty to the API:
an items upload said "No items in the upload." and an export "format: This field is
required.". It is now read, within the same bound as any body (API_MAX_UPLOAD_BYTES)."""

from __future__ import annotations

import io
import json

import pytest

from annotation.models import Item, Job
from tests.helpers.uploads import row_counts

pytestmark = pytest.mark.django_db


def chunked(body: bytes) -> dict:
    """The WSGI environ of a chunked request as gunicorn passes it: no CONTENT_LENGTH."""
    return {
        "CONTENT_LENGTH": "",
        "HTTP_TRANSFER_ENCODING": "chunked",
        "wsgi.input": io.BytesIO(body),
        "wsgi.input_terminated": True,
    }


def lines(*external_ids: str) -> bytes:
    payload = {"claim": "A claim.", "sentences": ["One sentence."]}
    return "\n".join(json.dumps({"external_id": e, "payload": payload}) for e in external_ids).encode()


def test_a_chunked_items_upload_is_read(client_for, owned_study):
    body = lines("chunk-1", "chunk-2", "chunk-3")
    answer = client_for("owner").generic(
        "POST", "/api/v1/studies/owned/items/", body, content_type="application/x-ndjson", **chunked(body)
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["created"] == 3
    assert Item.objects.filter(study=owned_study, external_id__startswith="chunk-").count() == 3


def test_a_chunked_json_body_is_read(client_for, owned_study):
    body = b'{"format": "csv"}'
    answer = client_for("owner").generic(
        "POST", "/api/v1/studies/owned/exports/", body, content_type="application/json", **chunked(body)
    )
    assert answer.status_code == 202, answer.content
    assert Job.objects.get(pk=answer.json()["id"]).parameters["format"] == "csv"


def test_a_chunked_body_over_the_bound_is_a_413(client_for, owned_study, settings):
    settings.API_MAX_UPLOAD_BYTES = 1024
    body = lines(*(f"x{n}" for n in range(100)))
    assert len(body) > 1024
    before = row_counts()
    answer = client_for("owner").generic(
        "POST", "/api/v1/studies/owned/items/", body, content_type="application/x-ndjson", **chunked(body)
    )
    assert answer.status_code == 413
    assert row_counts() == before
