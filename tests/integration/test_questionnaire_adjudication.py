"""Adjudicating a questionnaire item: its disagreement is found from the kind's agreement
values, the page shows the answers and a form, and the final answer is validated by the kind
(letters of the page's order turned into passage ids)."""

import json

import pytest
from django.contrib.auth.models import Group

from annotation.models import Adjudication, Participant
from annotation.services.analysis.adjudication import adjudication_state
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.authoring.studies import load_study_file
from tests.helpers.questionnaire import questionnaire_file

pytestmark = pytest.mark.django_db


def test_a_questionnaire_item_is_adjudicated_through_its_page(client, django_user_model):
    researcher = django_user_model.objects.create_user("rita", password="pw")
    researcher.groups.add(Group.objects.get_or_create(name="researchers")[0])
    client.force_login(researcher)
    study = load_study_file(questionnaire_file(items=2), owner=researcher).study
    answers = {"ann": "r0a", "bob": "r0b"}
    lines = [
        json.dumps(
            {"participant": who, "item": "q0", "answer": {"better": pick, "fluency": 3, "issue": "no"}}
        )
        for who, pick in answers.items()
    ]
    import_responses(study, lines, source=Participant.Source.LAB)
    listing = client.get(f"/research/s/{study.slug}/adjudication/").content.decode()
    assert 'id="item-q0"' in listing
    item = study.items.get(external_id="q0")
    url = f"/research/s/{study.slug}/adjudication/{item.pk}/"
    page = client.get(url).content.decode()
    assert page.count('name="q-better"') >= 2 and "alpha" not in page and "beta" not in page
    bad = client.post(url, {"q-better": "A", "q-issue": "no"})
    assert (
        bad.status_code == 400
        and "“How fluent are they?”: please answer this question." in bad.content.decode()
    )
    order = adjudication_state(study, item)["order"]
    good = client.post(url, {"q-better": "B", "q-fluency": "4", "q-issue": "no", "note": "B is complete."})
    assert good.status_code == 302
    assert Adjudication.objects.get().response.answer == {
        "better": order[1],
        "fluency": 4,
        "issue": "no",
        "errors": [],
    }
