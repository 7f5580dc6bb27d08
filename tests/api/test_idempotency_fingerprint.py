"""Review finding 9 (adversarial review): the ``Idempotency-Key`` fingerprint hashed only the
length of bodies over 1 MiB, so a different upload of the same length was answered with the
first one's stored result and silently dropped. The fingerprint now hashes the whole body as it
is read; the same key with another body is a 422 and nothing is written."""

from __future__ import annotations

import json

import pytest

from annotation.models import IdempotencyKey, Item

pytestmark = pytest.mark.django_db
PADDING = "\n" * (1024 * 1024 + 10)  # blank lines: over 1 MiB, skipped by the reader


def upload(client, external_id: str, key: str):
    line = json.dumps({"external_id": external_id, "payload": {"claim": "C.", "sentences": ["S."]}})
    body = line + PADDING
    return client.post(
        "/api/v1/studies/owned/items/",
        body,
        content_type="application/x-ndjson",
        HTTP_IDEMPOTENCY_KEY=key,
    )


def test_a_different_large_body_with_the_same_key_is_refused(client_for, owned_study):
    owner = client_for("owner")
    first = upload(owner, "idem-a", "same-key-large-1")
    assert first.status_code == 200 and first.json()["created"] == 1
    other = upload(owner, "idem-b", "same-key-large-1")  # same length, other content
    assert other.status_code == 422
    assert other.json() == {"Idempotency-Key": ["This key was used for a different request."]}
    assert not other.has_header("Idempotent-Replayed")
    assert not Item.objects.filter(external_id="idem-b").exists()


def test_the_same_large_body_is_still_replayed(client_for, owned_study):
    owner = client_for("owner")
    first = upload(owner, "idem-a", "same-key-large-2")
    again = upload(owner, "idem-a", "same-key-large-2")
    assert again.status_code == 200 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Item.objects.filter(external_id="idem-a").count() == 1
    assert IdempotencyKey.objects.filter(key="same-key-large-2").count() == 1
