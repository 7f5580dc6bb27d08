"""Usability defect 13: a study file with a misspelled top-level key and three bad items
needed two passes (the key first, then the items, named by index), and in the API a slug
clash hid everything else. Now the upload page and the API report every error in one pass,
each item named by its external_id as well, a clash with your own slug beside the rest;
nothing is written."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.models import Study
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file

pytestmark = pytest.mark.django_db


def bad_file(slug: str) -> dict:
    """A misspelled top-level key and three bad items, as the review uploaded."""
    data = claim_study_file(slug=slug, items=4)
    data["titel"] = "A typo"
    data["items"][1]["payload"]["claim"] = ""
    data["items"][2]["payload"]["sentences"] = []
    data["items"][3]["gold"] = {"label": "maybe"}
    return data


ITEM_ERRORS = [
    "items[1].payload.claim (external_id 'c1')",
    "items[2].payload.sentences (external_id 'c2')",
    "items[3].gold.label (external_id 'c3')",
]


def test_the_upload_page_lists_every_error_at_once(client, researcher):
    client.force_login(researcher)
    file = SimpleUploadedFile("study.json", json.dumps(bad_file("typo")).encode())
    answer = client.post("/research/studies/new/", {"study_file": file})
    html = answer.content.decode().replace("&#x27;", "'")
    assert answer.status_code == 400
    assert "<td>titel</td>" in html
    for path in ITEM_ERRORS:
        assert f"<td>{path}</td>" in html
    assert not Study.objects.filter(slug="typo").exists()


def test_in_the_api_a_clash_with_your_own_slug_hides_no_other_error(researcher):
    load_study_file(claim_study_file(slug="mine"), owner=researcher)
    client = APIClient()
    client.force_authenticate(researcher)
    answer = client.post("/api/v1/studies/", bad_file("mine"), format="json")
    assert answer.status_code == 400
    assert set(answer.json()) == {"slug", "titel", *ITEM_ERRORS}, answer.json()
    assert Study.objects.get(slug="mine").title != "A typo"


def test_in_the_api_another_researchers_slug_hides_no_other_error(researcher, django_user_model):
    """Every error of the file comes at once; the clash itself is told once the file is
    otherwise good, so a bad file says nothing of another researcher's study (finding 19)."""
    load_study_file(claim_study_file(slug="taken"), owner=django_user_model.objects.create_user("x"))
    client = APIClient()
    client.force_authenticate(researcher)
    answer = client.post("/api/v1/studies/", bad_file("taken"), format="json")
    assert answer.status_code == 400
    assert set(answer.json()) == {"titel", *ITEM_ERRORS}, answer.json()
    assert Study.objects.get(slug="taken").title != "A typo"
