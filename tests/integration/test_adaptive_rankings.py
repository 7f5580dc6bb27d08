"""Adaptive assignment is refused for a study that only ranks systems (a ranking, or a
questionnaire of picks and free text): bench/adaptive.py measured it costing more answers
than uniform assignment for the same ranking accuracy (docs/statistics.md, "Adaptive
collection"). Every entry point refuses it with the same message naming
``config.assignment``; a study stored adaptive before the rule keeps running, and its
overview says why it would be refused now."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.errors import InputError
from annotation.models import Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.adaptive import RANKING_REFUSED

pytestmark = pytest.mark.django_db

ADAPTIVE = {"assignment": "adaptive", "adaptive": {"min_answers": 2}}


def adaptive_file(example_study_file, name: str, *, slug: str = "adaptive-rank") -> dict:
    data = example_study_file(name)
    data.update(slug=slug, status="draft")
    data["config"] = {**data["config"], **ADAPTIVE}
    return data


def pick_only(data: dict) -> dict:
    """The pairwise questionnaire without its scale question: a pick and free text."""
    questions = [q for q in data["config"]["questions"] if q["type"] != "scale"]
    data["config"] = {**data["config"], "questions": questions}
    return data


def test_the_upload_page_refuses_an_adaptive_ranking_naming_the_field(client, researcher, example_study_file):
    upload = io.BytesIO(json.dumps(adaptive_file(example_study_file, "ranking")).encode())
    upload.name = "ranking.json"
    page = client.post("/research/studies/new/", {"study_file": upload})
    assert page.status_code == 400
    body = page.content.decode()
    assert "config.assignment" in body and "10.3% more answers than uniform" in body
    assert not Study.objects.filter(slug="adaptive-rank").exists()


def test_the_api_refuses_an_adaptive_ranking_on_create_and_on_patch(client, researcher, example_study_file):
    created = client.post(
        "/api/v1/studies/", adaptive_file(example_study_file, "ranking"), content_type="application/json"
    )
    assert created.status_code == 400
    assert created.json()["config.assignment"] == [RANKING_REFUSED]
    assert not Study.objects.filter(slug="adaptive-rank").exists()

    data = {**example_study_file("ranking"), "slug": "uniform-rank", "status": "draft"}
    study = load_study_file(data, owner=researcher).study
    patched = client.patch(
        f"/api/v1/studies/{study.slug}/",
        {"config": {**study.config, **ADAPTIVE}},
        content_type="application/json",
    )
    assert patched.status_code == 400
    assert patched.json()["config.assignment"] == [RANKING_REFUSED]
    study.refresh_from_db()
    assert "assignment" not in study.config


def test_loadstudy_refuses_an_adaptive_pick_only_questionnaire(tmp_path, example_study_file):
    path = tmp_path / "picks.json"
    path.write_text(json.dumps(pick_only(adaptive_file(example_study_file, "questionnaire-pairwise"))))
    with pytest.raises(CommandError, match=r"config\.assignment") as refused:
        call_command("loadstudy", str(path), stdout=io.StringIO())
    assert "10.3% more answers" in str(refused.value)
    assert not Study.objects.filter(slug="adaptive-rank").exists()


@pytest.mark.parametrize("name", ["questionnaire-pairwise", "questionnaire-best-worst"])
def test_a_study_with_a_question_to_adapt_on_stays_adaptive(example_study_file, name):
    """A pick beside a scale or a choice question: the priority has answers to adapt on."""
    study = load_study_file(adaptive_file(example_study_file, name)).study
    assert study.config["assignment"] == "adaptive"


def test_a_best_worst_questionnaire_without_its_choice_is_refused(example_study_file):
    data = adaptive_file(example_study_file, "questionnaire-best-worst")
    data["config"]["questions"] = [q for q in data["config"]["questions"] if q["type"] == "pick"]
    with pytest.raises(InputError) as refused:
        load_study_file(data)
    assert refused.value.errors == {"config.assignment": [RANKING_REFUSED]}


def test_a_ranking_stored_adaptive_before_the_rule_keeps_running_and_its_overview_warns(
    client, researcher, example_study_file
):
    data = {**example_study_file("ranking"), "slug": "old-rank", "status": "draft"}
    study = load_study_file(data, owner=researcher).study
    stored = {**study.config, **ADAPTIVE, "adaptive": {"min_answers": 2, "budget": None, "stop": None}}
    Study.objects.filter(pk=study.pk).update(config=stored)  # as saved before the rule

    renamed = client.patch(
        f"/api/v1/studies/{study.slug}/",
        {"title": "Renamed", "config": stored},
        content_type="application/json",
    )
    assert renamed.status_code == 200, renamed.json()
    study.refresh_from_db()
    assert study.title == "Renamed" and study.config["assignment"] == "adaptive"

    page = client.get(f"/research/s/{study.slug}/").content.decode()
    assert 'id="adaptive-refused"' in page and "keeps running as it is" in page

    uniform = load_study_file({**example_study_file("ranking"), "slug": "new-rank"}, owner=researcher).study
    page = client.get(f"/research/s/{uniform.slug}/").content.decode()
    assert 'id="adaptive-refused"' not in page
