"""A training quiz: after each question the participant sees whether they were right, the
right answer and the study file's explanation; never before answering."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotation.models import Item
from annotation.services.authoring.studies import load_study_file
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.exams import file_position
from tests.helpers.flow import start

pytestmark = pytest.mark.django_db
GOLD = ["yes", "not_helpful", "yes"]


@pytest.fixture
def training(example_study_file):
    exam = example_study_file("simulation-exam")
    exam["exam"]["training"] = True
    for number, item in enumerate(exam["items"]):
        item["explanation"] = f"Because of reason **{number}**."
    load_study_file(exam)
    main = example_study_file("plausibility")
    main.update(qualification="demo-simulation-exam", screenout_code="PLAUS-OUT")
    return load_study_file(main).study


def test_each_question_is_followed_by_the_right_answer_and_why(training):
    client = Client()
    html = start(client, training.slug, f"?PROLIFIC_PID={prolific_id('learner')}")
    action = re.search(r'action="(/s/[\w-]+/exam/a/(\d+)/)"', html)
    feedback_url = f"{action.group(1)}feedback/"
    assert client.get(feedback_url).status_code == 302  # nothing is shown before answering
    position = file_position(action.group(1))
    wrong = "no" if GOLD[position] != "no" else "yes"
    answered = client.post(action.group(1), {"choice": wrong})
    assert answered.status_code == 302 and answered.url == feedback_url
    page = client.get(feedback_url).content.decode()
    assert 'id="exam-verdict">Not quite<' in page
    assert f"Because of reason <strong>{position}</strong>." in page
    right = page[page.index('id="exam-right-answer"') :]
    assert re.search(rf'value="{GOLD[position]}"[^>]*checked', right)
    assert "question 1 of 3" in page and 'id="exam-next"' in page and "Next question" in page
    nxt = client.get(f"/s/{training.slug}/exam/").content.decode()
    assert "Question 2 of 3" in nxt


def test_an_exam_without_training_shows_no_feedback(example_study_file):
    load_study_file(example_study_file("simulation-exam"))
    main = example_study_file("plausibility")
    main.update(qualification="demo-simulation-exam")
    study = load_study_file(main).study
    client = Client()
    html = start(client, study.slug)
    action = re.search(r'action="(/s/[\w-]+/exam/a/\d+/)"', html).group(1)
    assert client.post(action, {"choice": "no"}).url == f"/s/{study.slug}/exam/"
    assert client.get(f"{action}feedback/").url == f"/s/{study.slug}/exam/"
    assert Item.objects.filter(explanation="").count() == Item.objects.count()
