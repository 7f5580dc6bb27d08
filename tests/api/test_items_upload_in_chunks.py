"""The API's items upload past one chunk: created and updated a chunk at a time in one
transaction, so a late bad line names its line and undoes the earlier chunks' writes, and
a line repeating an id of an earlier chunk is named with that chunk's line.

The chunk is made small here (``item_load.CHUNK_ROWS``) so that a thousand lines cross
several chunks; the code path is the one a million lines take.
"""

from __future__ import annotations

import json

import pytest

from annotation.models import Item
from annotation.services.authoring import item_load

pytestmark = pytest.mark.django_db

CHUNK = 300
URL = "/api/v1/studies/owned/items/"


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(item_load, "CHUNK_ROWS", CHUNK)


def line(external_id: str, claim: str = "A claim.", sentences: list[str] | None = None) -> str:
    payload = {"claim": claim, "sentences": ["One sentence."] if sentences is None else sentences}
    return json.dumps({"external_id": external_id, "payload": payload})


def upload(client, lines: list[str]):
    return client.post(URL, "\n".join(lines), content_type="application/x-ndjson")


def test_a_long_upload_creates_then_updates_across_chunks(client_for, owned_study):
    owner = client_for("owner")
    answer = upload(owner, [line(f"n{n}") for n in range(1000)])
    assert answer.status_code == 200 and answer.json() == {"created": 1000, "updated": 0}
    again = [line(f"n{n}", claim="Changed." if n % 100 == 0 else "A claim.") for n in range(1000)]
    answer = upload(owner, [*again, line("c0", claim="The first item, changed.")])
    assert answer.status_code == 200 and answer.json() == {"created": 0, "updated": 11}
    assert Item.objects.get(study=owned_study, external_id="n900").payload["claim"] == "Changed."
    assert Item.objects.filter(study=owned_study).count() == 1004


def test_a_late_bad_line_undoes_the_earlier_chunks_and_names_its_line(client_for, owned_study):
    owner = client_for("owner")
    lines = [line("c0", claim="Changed in the first chunk."), *[line(f"n{n}") for n in range(1000)]]
    lines[950] = line("n949", sentences=[])  # line 951, the fourth chunk
    lines[990] = line("n5")  # line 991 repeats line 7, three chunks earlier
    answer = upload(owner, lines)
    assert answer.status_code == 400
    errors = answer.json()
    assert set(errors) == {
        "line 951: payload.sentences (external_id 'n949')",
        "line 991: external_id (external_id 'n5')",
    }
    assert errors["line 991: external_id (external_id 'n5')"] == ["Repeats the external_id of line 7."]
    assert Item.objects.filter(study=owned_study).count() == 4  # the first chunks' 300 new ones undone
    assert (
        Item.objects.get(study=owned_study, external_id="c0").payload["claim"]
        != "Changed in the first chunk."
    )


def test_an_upload_past_the_inline_bound_is_a_job_that_loads_it(
    client_for, owned_study, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.ITEMS_UPLOAD_INLINE_LINES, settings.UPLOAD_DIR = 100, tmp_path
    owner = client_for("owner")
    small = upload(owner, [line(f"s{n}") for n in range(100)])
    assert small.status_code == 200 and small.json() == {"created": 100, "updated": 0}
    with django_capture_on_commit_callbacks(execute=True):
        started = upload(owner, [line(f"n{n}") for n in range(700)])
    assert started.status_code == 202 and started.json()["kind"] == "items_upload"
    job = owner.get(started["Location"]).json()
    assert job["status"] == "done" and job["result"] == {"created": 700, "updated": 0}
    assert Item.objects.filter(study=owned_study).count() == 804
    assert list(tmp_path.iterdir()) == []  # each upload deleted once loaded


def test_a_refused_upload_job_fails_and_lists_every_line_error(
    client_for, owned_study, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.ITEMS_UPLOAD_INLINE_LINES, settings.UPLOAD_DIR = 100, tmp_path
    owner = client_for("owner")
    lines = [line(f"n{n}") for n in range(700)]
    lines[650] = line("n650", sentences=[])
    with django_capture_on_commit_callbacks(execute=True):
        started = upload(owner, lines)
    assert started.status_code == 202
    job = owner.get(started["Location"]).json()
    assert job["status"] == "failed" and "Nothing was written: 1 errors" in job["error"]
    assert "line 651: payload.sentences (external_id 'n650')" in job["error"]
    assert list(job["result"]["errors"]) == ["line 651: payload.sentences (external_id 'n650')"]
    assert Item.objects.filter(study=owned_study).count() == 4
    assert list(tmp_path.iterdir()) == []


def test_the_job_loads_only_a_stored_upload_of_its_own_study(client_for, owned_study):
    answer = client_for("owner").post(
        "/api/v1/jobs/",
        {"kind": "items_upload", "study": "owned", "parameters": {"file": "../../etc/passwd"}},
        format="json",
    )
    assert answer.status_code == 400 and "parameters.file" in answer.json()
