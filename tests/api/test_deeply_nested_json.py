"""Review finding 14 (adversarial review): JSON nested thousands of levels deep (``[`` × 5000)
gave a 500 on the upload page, ``POST /api/v1/studies/`` and the items upload, and a
``RecursionError`` traceback in ``importresponses``. Every way in reads JSON through
``services.web.json_input.read_json``, which bounds the depth and names the place: a 400 (or the
command's usual error), nothing written."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.services.web.json_input import MAX_JSON_DEPTH
from tests.conftest import claim_study_file
from tests.helpers.uploads import error_cells, row_counts, upload_page

pytestmark = pytest.mark.django_db
DEEP = "[" * 5000 + "]" * 5000
JUST_TOO_DEEP = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)  # parses, but deeper than the bound
TOO_DEEP = f"Nested deeper than {MAX_JSON_DEPTH} levels."


def study_file_with_provenance(nested: str) -> str:
    """A study file whose first item's provenance is ``nested`` (JSON text)."""
    text = json.dumps(claim_study_file(slug="deep", items=2))
    return text.replace('"provenance": {"system": "FT"}', f'"provenance": {nested}', 1)


def test_the_study_file_helper_really_nests_the_provenance():
    assert '"provenance": [[' in study_file_with_provenance(DEEP)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (DEEP, "body"),
        (study_file_with_provenance(DEEP), "body"),
        (study_file_with_provenance(JUST_TOO_DEEP), "items[0].provenance"),
    ],
)
def test_post_studies_with_deep_json_is_a_400_naming_the_place(client_for, users, body, field):
    before = row_counts()
    answer = client_for("owner").post("/api/v1/studies/", body, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json() == {field: [TOO_DEEP]}
    assert row_counts() == before


@pytest.mark.parametrize(
    ("body", "field"),
    [(DEEP, "study_file"), (study_file_with_provenance(JUST_TOO_DEEP), "items[0].provenance")],
)
def test_the_upload_page_refuses_deep_json_naming_the_place(client, users, body, field):
    before = row_counts()
    client.force_login(users["owner"])
    page = upload_page(client, body.encode())
    assert page.status_code == 400
    assert f"<td>{field}</td><td>{TOO_DEEP}</td>" in error_cells(page)
    assert row_counts() == before


def test_an_items_upload_line_nested_deep_is_a_400_naming_the_line(client_for, owned_study):
    before = row_counts()
    fine = {"external_id": "fine", "payload": {"claim": "C.", "sentences": ["S."]}}
    deep = json.dumps({**fine, "external_id": "deep"})[:-1] + f', "provenance": {JUST_TOO_DEEP}}}'
    lines = [json.dumps(fine), deep, DEEP]
    answer = client_for("owner").post(
        "/api/v1/studies/owned/items/", "\n".join(lines), content_type="application/x-ndjson"
    )
    assert answer.status_code == 400
    assert answer.json() == {"line 2: provenance": [TOO_DEEP], "line 3": [TOO_DEEP]}
    assert row_counts() == before


def test_importresponses_names_the_line_instead_of_a_traceback(tmp_path, make_claim_study):
    study = make_claim_study()
    before = row_counts()
    good = {"participant": "ann", "item": "c0", "answer": {"label": "neutral"}}
    path = tmp_path / "responses.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(good)[:-1] + f', "display_order": {DEEP}}}\n')
    with pytest.raises(CommandError) as caught:
        call_command("importresponses", study.slug, str(path))
    assert f"line 2: {TOO_DEEP}" in str(caught.value)
    assert row_counts() == before


def test_loadstudy_names_the_place_instead_of_a_traceback(tmp_path):
    before = row_counts()
    path = tmp_path / "study.json"
    path.write_text(study_file_with_provenance(JUST_TOO_DEEP))
    with pytest.raises(CommandError) as caught:
        call_command("loadstudy", str(path))
    assert f"items[0].provenance: {TOO_DEEP}" in str(caught.value)
    assert row_counts() == before
