"""A questionnaire study through the API and the admin: the same kind hooks refuse a bad
question, a bad item and bad gold, with the same messages as the loader, and write nothing."""

from __future__ import annotations

import html
import json

import pytest

from annotation.errors import InputError
from annotation.models import Item, Study
from annotation.services.authoring.studies import load_study_file
from tests.helpers.admin import admin_form_data, form_errors
from tests.helpers.questionnaire import QUESTIONS, questionnaire_file

pytestmark = pytest.mark.django_db
THREE_PASSAGES = {"passages": [{"id": f"p{n}", "text": f"Text {n}."} for n in range(3)]}


def loader_errors(data: dict) -> dict:
    with pytest.raises(InputError) as caught:
        load_study_file(data)
    return caught.value.errors


def test_the_api_refuses_a_show_if_on_a_later_question_as_the_loader_does(client_for, users):
    questions = [QUESTIONS[3], *QUESTIONS[:3]]  # "which" looks at "issue", now after it
    data = questionnaire_file(slug="api-quest", config={"questions": questions})
    answer = client_for("owner").post("/api/v1/studies/", data, format="json")
    assert answer.status_code == 400
    assert answer.json() == loader_errors(data)
    assert "'issue' is not a question before this one" in answer.json()["config.questions[0].show_if"][0]
    assert not Study.objects.filter(slug="api-quest").exists()
    created = client_for("owner").post(
        "/api/v1/studies/", questionnaire_file(slug="api-quest"), format="json"
    )
    assert created.status_code == 201


def test_items_upload_and_admin_refuse_an_item_the_questions_cannot_use(client_for, users, client):
    study = load_study_file(questionnaire_file(slug="owned-quest"), owner=users["owner"]).study
    line = json.dumps({"external_id": "bad", "payload": THREE_PASSAGES})
    upload = client_for("owner").post(
        "/api/v1/studies/owned-quest/items/", line, content_type="application/x-ndjson"
    )
    message = "question 'better' compares exactly two passages; this item has 3."
    assert upload.status_code == 400
    assert upload.json() == {"line 1: payload.passages (external_id 'bad')": [message]}
    assert study.items.count() == 4

    client.force_login(users["admin"])
    item = study.items.order_by("external_id").first()
    before = item.payload
    page = client.post(
        f"/admin/annotation/item/{item.pk}/change/",
        admin_form_data(Item, item, users["admin"], payload=THREE_PASSAGES),
    )
    assert f"payload.passages: {message}" in html.unescape(form_errors(page))
    bad_gold = client.post(
        f"/admin/annotation/item/{item.pk}/change/",
        admin_form_data(Item, item, users["admin"], gold={"fluency": 9}),
    )
    assert "“How fluent are they?”: choose a point of the scale" in html.unescape(form_errors(bad_gold))
    item.refresh_from_db()
    assert item.payload == before and item.gold is None
