"""Whole numbers that come from outside are bounded where they enter (red-team round 4, T3):
a value beyond what its field takes, or not digits at all (``²``, 5,000 digits), gets a
clear error naming the field and changes nothing, through the builder's form, the REST API
(study settings, study files, job parameters) and a command. The ORM's own range check
(``roft_site/postgresql``, ``test_integers_out_of_range``) is the net under these."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.models import Job, Study
from tests.integration.test_study_builder import QUESTIONS, build, errors_of, form

pytestmark = pytest.mark.django_db

OUT_OF_RANGE = [str(2**31), str(2**32 + 1), "9" * 5000]


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


@pytest.mark.parametrize("value", [*OUT_OF_RANGE, "²"])
def test_the_builder_names_a_setting_out_of_range_and_saves_nothing(client, researcher, value):
    page = client.post("/research/builder/", {**form(slug="huge", items_per_session=value), "action": "save"})
    assert page.status_code == 400
    assert any("items_per_session" in where for where in errors_of(page))
    assert not Study.objects.filter(slug="huge").exists()


@pytest.mark.parametrize("value", [*OUT_OF_RANGE, "²"])
def test_the_builder_names_a_question_number_out_of_range(client, researcher, value):
    questions = [
        {**QUESTIONS[2], "max_length": value},
        {**QUESTIONS[1], "show_if": "why", "show_if_values": value},
    ]
    page = client.post("/research/builder/", {**form(slug="huge", questions=questions), "action": "save"})
    assert page.status_code == 400 and errors_of(page)
    assert not Study.objects.filter(slug="huge").exists()


def test_an_edit_out_of_range_keeps_the_study_as_it_was(client, researcher):
    build(client)
    page = client.post("/research/s/built/edit/", form(annotations_per_item=str(2**32 + 2)))
    assert page.status_code == 400 and any("annotations_per_item" in where for where in errors_of(page))
    assert Study.objects.get(slug="built").annotations_per_item == 2


@pytest.mark.parametrize("value", [2**31, 2**32 + 1, 2**63])
def test_the_api_refuses_a_study_setting_out_of_range(api, researcher, make_claim_study, value):
    study = make_claim_study()
    Study.objects.filter(pk=study.pk).update(owner=researcher)
    answer = api.patch(f"/api/v1/studies/{study.slug}/", {"items_per_session": value}, format="json")
    assert answer.status_code == 400 and "items_per_session" in answer.content.decode()
    assert Study.objects.get(pk=study.pk).items_per_session == study.items_per_session


def test_a_study_file_with_a_count_out_of_range_is_refused(api):
    study_file = {
        "slug": "huge-file",
        "title": "Huge",
        "kind": "likert",
        "annotations_per_item": 2**32 + 1,
        "items": [{"external_id": "i1", "payload": {"text": "A sentence."}}],
    }
    answer = api.post("/api/v1/studies/", study_file, format="json")
    assert answer.status_code == 400 and "annotations_per_item" in answer.content.decode()
    assert not Study.objects.filter(slug="huge-file").exists()


@pytest.mark.parametrize("seed", [2**32, 2**63, 2**70])
def test_a_job_seed_out_of_range_is_refused_naming_it(api, researcher, make_claim_study, seed):
    study = make_claim_study()
    Study.objects.filter(pk=study.pk).update(owner=researcher)
    answer = api.post(
        "/api/v1/jobs/",
        {"kind": "rate_llm", "study": study.slug, "parameters": {"model": "tiny", "seed": seed}},
        format="json",
    )
    assert answer.status_code == 400 and "parameters.seed" in answer.content.decode()
    assert not Job.objects.exists()
