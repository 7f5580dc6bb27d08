"""Studies and items through the API: create, update, status, uploads, bad input, idempotency."""

from __future__ import annotations

import json

import pytest

from annotation.models import IdempotencyKey, Item, Study
from tests.conftest import claim_study_file

pytestmark = pytest.mark.django_db

# The users and the owned study are written once for the module (tests/api/conftest.py).
ROWS_FOR_THE_MODULE = True


def line(external_id: str, **payload) -> str:
    body = {"claim": "A claim.", "sentences": ["One sentence."], **payload}
    return json.dumps({"external_id": external_id, "payload": body})


def test_create_a_study_from_a_study_file(client_for, users):
    answer = client_for("owner").post("/api/v1/studies/", claim_study_file(slug="api-made"), format="json")
    assert answer.status_code == 201
    body = answer.json()
    assert body["owner"] == "owner" and body["progress"]["items"] == 6
    assert Study.objects.get(slug="api-made").owner == users["owner"]


def test_an_invalid_study_file_names_the_item_and_field_and_writes_nothing(client_for):
    data = claim_study_file(slug="broken")
    data["items"][2]["payload"]["sentences"] = []
    answer = client_for("owner").post("/api/v1/studies/", data, format="json")
    assert answer.status_code == 400
    assert "items[2].payload.sentences (external_id 'c2')" in answer.json()
    assert not Study.objects.filter(slug="broken").exists()


def test_an_existing_slug_is_refused_not_overwritten(client_for, owned_study):
    answer = client_for("other").post("/api/v1/studies/", claim_study_file(slug="owned"), format="json")
    assert answer.status_code == 400 and "slug" in answer.json()
    assert Study.objects.get(slug="owned").owner.username == "owner"


def test_update_checks_config_with_the_kind_and_status_follows_transitions(client_for, owned_study):
    owner = client_for("owner")
    bad = owner.patch("/api/v1/studies/owned/", {"config": {"nonsense": 1}, "title": "X"}, format="json")
    assert bad.status_code == 400 and "config.nonsense" in bad.json()
    assert Study.objects.get(slug="owned").title == "Claims under test"
    assert owner.patch("/api/v1/studies/owned/", {"items_per_session": 0}, format="json").status_code == 400
    assert (
        owner.post("/api/v1/studies/owned/status/", {"status": "closed"}, format="json").json()["status"]
        == "closed"
    )
    Study.objects.filter(slug="owned").update(status="draft")
    assert owner.post("/api/v1/studies/owned/status/", {"status": "draft"}, format="json").status_code == 200
    assert owner.post("/api/v1/studies/owned/status/", {"status": "gone"}, format="json").status_code == 400


def test_idempotency_key_replays_the_first_answer(client_for):
    owner = client_for("owner")
    headers = {"HTTP_IDEMPOTENCY_KEY": "create-once"}
    first = owner.post("/api/v1/studies/", claim_study_file(slug="once"), format="json", **headers)
    again = owner.post("/api/v1/studies/", claim_study_file(slug="once"), format="json", **headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    other_body = owner.post("/api/v1/studies/", claim_study_file(slug="twice"), format="json", **headers)
    assert other_body.status_code == 422 and "Idempotency-Key" in other_body.json()
    assert not Study.objects.filter(slug="twice").exists()


def test_a_failed_write_forgets_its_key_so_the_client_can_retry(client_for):
    owner = client_for("owner")
    data = claim_study_file(slug="retry")
    data["items"][0]["payload"]["claim"] = ""
    headers = {"HTTP_IDEMPOTENCY_KEY": "retry-me"}
    assert owner.post("/api/v1/studies/", data, format="json", **headers).status_code == 400
    assert not IdempotencyKey.objects.filter(key="retry-me").exists()
    good = owner.post("/api/v1/studies/", claim_study_file(slug="retry"), format="json", **headers)
    assert good.status_code == 201


def test_items_upload_as_json_lines_creates_and_updates(client_for, owned_study):
    owner = client_for("owner")
    body = "\n".join([line("c0", claim="Changed claim."), line("n1"), "", line("n2")])
    answer = owner.post("/api/v1/studies/owned/items/", body, content_type="application/x-ndjson")
    assert answer.status_code == 200 and answer.json() == {"created": 2, "updated": 1}
    assert Item.objects.get(study=owned_study, external_id="c0").payload["claim"] == "Changed claim."


def test_one_bad_line_writes_nothing_and_names_the_line(client_for, owned_study):
    before = Item.objects.filter(study=owned_study).count()
    body = "\n".join([line("n1"), line("n2", sentences=[]), "{not json", line("n1")])
    answer = client_for("owner").post(
        "/api/v1/studies/owned/items/", body, content_type="application/x-ndjson"
    )
    assert answer.status_code == 400
    errors = answer.json()
    assert set(errors) == {
        "line 2: payload.sentences (external_id 'n2')",
        "line 3",
        "line 4: external_id (external_id 'n1')",
    }
    assert errors["line 4: external_id (external_id 'n1')"] == ["Repeats the external_id of line 1."]
    assert Item.objects.filter(study=owned_study).count() == before


def test_uploads_past_the_size_bound_are_refused(client_for, owned_study, settings):
    settings.API_MAX_UPLOAD_BYTES = 2048
    body = "\n".join(line(f"big{i}") for i in range(60))
    answer = client_for("owner").post(
        "/api/v1/studies/owned/items/", body, content_type="application/x-ndjson"
    )
    assert answer.status_code == 413
    assert not Item.objects.filter(external_id__startswith="big").exists()
    big_json = client_for("owner").post("/api/v1/studies/", {"title": "x" * 4000}, format="json")
    assert big_json.status_code == 413


def test_items_list_filters(client_for, owned_study):
    owner = client_for("owner")
    assert owner.get("/api/v1/studies/owned/items/").json()["count"] == 4
    rome = owner.get("/api/v1/studies/owned/items/?system=ROME").json()["results"]
    assert {item["external_id"] for item in rome} == {"c1", "c3"}
    assert owner.get("/api/v1/studies/owned/items/?complete=true").json()["count"] == 0
    assert owner.get("/api/v1/studies/owned/items/?attention_check=maybe").status_code == 400
