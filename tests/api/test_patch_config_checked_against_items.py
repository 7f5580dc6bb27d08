"""Review finding 6 (adversarial review): ``PATCH /api/v1/studies/<slug>/`` re-validated only
the config's shape, so a ranking study could be told to show more passages than its items hold
(every page a 500) or fewer than an attention check's gold needs (participants screened out
unfairly). PATCH now goes through ``validation.check_kind_and_config``, which checks the items
the study keeps."""

from __future__ import annotations

import pytest

from annotation.models import Item, Study

pytestmark = pytest.mark.django_db


def test_a_config_showing_more_passages_than_the_items_hold_is_refused(client_for, api_ranking):
    answer = client_for("owner").patch("/api/v1/studies/api-ranking/", {"config": {"show": 5}}, format="json")
    assert answer.status_code == 400
    messages = answer.json()["config"]
    assert len(messages) == 4
    assert all("The study shows 5 passages per page; this item has 3." in m for m in messages)
    assert Study.objects.get(pk=api_ranking.pk).config["show"] == 3


def test_a_config_that_breaks_an_attention_checks_gold_is_refused(client_for, api_ranking):
    Item.objects.filter(study=api_ranking).update(
        is_attention_check=True, gold={"choices": {"consistency": {"least": "FT_L"}}}
    )
    answer = client_for("owner").patch("/api/v1/studies/api-ranking/", {"config": {"show": 2}}, format="json")
    assert answer.status_code == 400
    assert "An item with gold must hold exactly 2 passages (all shown)." in answer.json()["config"][0]
    assert Study.objects.get(pk=api_ranking.pk).config["show"] == 3


def test_a_live_studys_questions_are_kept_and_its_title_still_changes(client_for, users):
    """Issue 26: answers mean what the questions said when they were given, so a study that
    has gone live keeps its config on every path (PATCH here; the builder and the file upload
    through the same ``check_kind_and_config``); a draft's questions change freely."""
    from annotation.services.authoring.studies import load_study_file
    from annotation.services.authoring.validation import CONFIG_KEPT
    from tests.helpers.questionnaire import QUESTIONS, questionnaire_file

    load_study_file(questionnaire_file(slug="kept"), owner=users["owner"])
    owner = client_for("owner")
    fewer = {"config": {"questions": QUESTIONS[:3]}}
    refused = owner.patch("/api/v1/studies/kept/", {**fewer, "title": "New"}, format="json")
    assert refused.status_code == 400
    assert refused.json() == {"config": [CONFIG_KEPT]}
    assert Study.objects.get(slug="kept").title == "Which reply is better?"
    unchanged = {"config": {"questions": QUESTIONS}, "title": "New"}
    same = owner.patch("/api/v1/studies/kept/", unchanged, format="json")
    assert same.status_code == 200 and Study.objects.get(slug="kept").title == "New"
    Study.objects.filter(slug="kept").update(status="draft")
    assert owner.patch("/api/v1/studies/kept/", fewer, format="json").status_code == 200
    assert len(Study.objects.get(slug="kept").config["questions"]) == 3
