"""The survey kinds through the HTTP layer: a participant completes each, bad forms get a
400 naming the problem with nothing stored, answers are stored in the contract's shapes."""

import re

import pytest

from annotation.models import Assignment, Response
from annotation.services.authoring.studies import load_study_file
from tests.helpers.flow import start, task_action

pytestmark = pytest.mark.django_db


def study_from(example_study_file, kind, **fields):
    data = example_study_file(kind)
    data.update(fields)
    return load_study_file(data).study


def next_page(client, slug) -> str:
    return client.get(f"/s/{slug}/task/", follow=True).content.decode()


def test_likert_participant_completes_and_ratings_are_integers(client, example_study_file):
    study = study_from(example_study_file, "likert", items_per_session=2)
    html = start(client, study.slug)
    fields = sorted(set(re.findall(r'name="(rating-[\w-]+)"', html)))
    assert len(fields) == 9 and "rating-edit_main" in fields
    response = client.post(task_action(html), dict.fromkeys(fields[:-1], "5"))
    assert response.status_code == 400
    assert "Rate the statement" in response.content.decode() and Response.objects.count() == 0
    response = client.post(task_action(html), {**dict.fromkeys(fields, "5"), fields[0]: "8"})
    assert response.status_code == 400 and b"outside the scale" in response.content
    for _ in range(2):
        client.post(task_action(html), dict.fromkeys(fields, "6"))
        html = next_page(client, study.slug)
    assert "DEMO-LIKERT-4K8" in html
    answers = [r.answer for r in Response.objects.all()]
    assert all(set(a["ratings"].values()) == {6} and len(a["ratings"]) == 9 for a in answers)


def test_plausibility_participant_completes_and_ratings_are_keyed_by_explanation(client, example_study_file):
    study = study_from(example_study_file, "plausibility", items_per_session=3)
    html = start(client, study.slug)
    for page in range(3):
        assert f"Page {page + 1} of 3" in html
        if page == 0:
            bad = client.post(task_action(html), {"rating-1": "yes", "rating-2": "perhaps"})
            assert bad.status_code == 400 and b"Rate explanation 3" in bad.content
        client.post(task_action(html), {"rating-1": "yes", "rating-2": "moderate", "rating-3": "no"})
        html = next_page(client, study.slug)
    assert "DEMO-PLAUS-3W7" in html
    for response in Response.objects.select_related("item"):
        order = response.display_order["order"]
        assert response.answer["ratings"] == dict(zip(order, ["yes", "moderate", "no"], strict=True))
        assert sorted(order) == sorted(e["id"] for e in response.item.payload["explanations"])


def test_simulation_participant_completes_and_precision_inputs_are_recorded(client, example_study_file):
    study = study_from(example_study_file, "simulation-pairwise")
    html = start(client, study.slug)
    bad = client.post(task_action(html), {"choice": "yes"})
    assert bad.status_code == 400 and b"Choose one answer" in bad.content
    for _ in range(3):
        client.post(task_action(html), {"choice": "response_2"})
        html = next_page(client, study.slug)
    assert "DEMO-SIMPW-5T1" in html
    for response in Response.objects.select_related("item"):
        expected = response.item.payload["model_followup_answer"] == "response_2"
        assert response.score_details == {"simulatable": True, "matches_model": expected}
        assert response.answer == {"choice": "response_2"} and response.correct is None


def test_ranking_participant_completes_with_letters(client, example_study_file):
    study = study_from(example_study_file, "ranking")
    html = start(client, study.slug)
    form = {"consistency-most": "A", "consistency-least": "B", "fluency-most": "C", "fluency-least": "A"}
    same = client.post(task_action(html), {**form, "consistency-least": "A"})
    assert same.status_code == 400 and b"MOST and LEAST must be different passages" in same.content
    assert Response.objects.count() == 0
    for _ in range(3):
        client.post(task_action(html), form)
        html = next_page(client, study.slug)
    assert "DEMO-RANK-9P3" in html
    assert Assignment.objects.filter(status="answered").count() == 3
