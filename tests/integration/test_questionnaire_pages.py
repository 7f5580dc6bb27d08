"""A questionnaire study through the participant pages on PostgreSQL: the page shows letters
and no systems, a bad form gets a 400 naming the question with nothing stored, answers are
stored keyed by question id with passage ids; imports go through the same rules."""

import json
import re

import pytest

from annotation.errors import InputError
from annotation.models import Assignment, Participant, Response
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.authoring.studies import load_study_file
from tests.helpers.flow import start, task_action
from tests.helpers.questionnaire import questionnaire_file

pytestmark = pytest.mark.django_db


def test_a_participant_answers_questionnaire_pages(client):
    study = load_study_file(questionnaire_file()).study
    html = start(client, study.slug)
    # systems and passage ids (r1a, r1b, …) stay on the server; whole words only, since
    # the page's random CSP nonce and CSRF token may hold "r3a" by chance
    assert not re.search(r"\b(alpha|beta|r\d[ab])\b", html)
    assert "<em>say hello</em>" in html and "Which reply is <strong>better</strong>?" in html
    assert sorted(set(re.findall(r'name="(q-[\w-]+)"', html))) == [
        "q-better",
        "q-errors",
        "q-fluency",
        "q-issue",
        "q-which",
        "q-why",
    ]
    assert 'data-show-if="q-issue"' in html and 'data-show-if-values="[&quot;yes&quot;]"' in html
    action = task_action(html)

    missing = client.post(action, {"q-better": "A", "q-issue": "no"})
    assert missing.status_code == 400
    assert "“How fluent are they?”: please answer this question." in missing.content.decode()
    opened = client.post(action, {"q-better": "A", "q-fluency": "4", "q-issue": "yes"})
    assert opened.status_code == 400 and "“Which kinds of mistake?”: please answer" in opened.content.decode()
    off_scale = client.post(action, {"q-better": "A", "q-fluency": "9", "q-issue": "no"})
    assert off_scale.status_code == 400 and "from 1 to 5" in off_scale.content.decode()
    assert 'value="A" data-keys="a 1" checked' in off_scale.content.decode()  # kept on the page
    assert Response.objects.count() == 0
    assert Assignment.objects.get().status == "assigned"

    form = {"q-better": "B", "q-fluency": "4", "q-issue": "yes", "q-which": ["facts"], "q-errors": ["1"]}
    assert client.post(action, form).status_code == 302
    html = client.get(f"/s/{study.slug}/task/", follow=True).content.decode()
    client.post(
        task_action(html), {"q-better": "tie", "q-fluency": "2", "q-issue": "no", "q-why": "  same  "}
    )
    html = client.get(f"/s/{study.slug}/task/", follow=True).content.decode()
    assert "QUEST-DONE" in html

    first, second = Response.objects.select_related("item").order_by("id")
    order = first.display_order["order"]
    assert first.answer == {
        "better": order[1],
        "fluency": 4,
        "issue": "yes",
        "which": ["facts"],
        "errors": [1],
    }
    assert second.answer == {"better": "tie", "fluency": 2, "issue": "no", "errors": [], "why": "same"}


def test_imports_follow_the_same_rules_and_name_passages_by_id():
    study = load_study_file(questionnaire_file()).study
    good = {"better": "r0b", "fluency": 3, "issue": "no"}
    hidden = {"better": "r1a", "fluency": 3, "issue": "no", "which": ["facts"]}
    lines = [
        json.dumps({"participant": "lab-1", "item": "q0", "answer": good}),
        json.dumps({"participant": "lab-1", "item": "q1", "answer": hidden}),
    ]
    with pytest.raises(InputError) as refused:
        import_responses(study, lines, source=Participant.Source.LAB)
    assert "“Which kinds of mistake?”: not asked" in str(refused.value) and Response.objects.count() == 0
    result = import_responses(study, lines[:1], source=Participant.Source.LAB)
    assert result.created == 1 and Response.objects.get().answer == good


@pytest.mark.parametrize(
    "number",
    ["9" * 5000, "²", "٣" * 30, "-1", str(2**63), "1e30", "NaN"],
)
def test_an_unparseable_number_on_a_scale_or_sentence_is_a_400_naming_it(client, number):
    """Digits ``int`` refuses (over 4,300 of them, a superscript ``str.isdigit`` accepts) are
    refused like any other wrong value: a 400 naming the question, nothing stored."""
    study = load_study_file(questionnaire_file()).study
    action = task_action(start(client, study.slug))
    scale = client.post(action, {"q-better": "A", "q-fluency": number, "q-issue": "no"})
    assert scale.status_code == 400
    assert "“How fluent are they?”" in scale.content.decode()
    form = {"q-better": "A", "q-fluency": "3", "q-issue": "yes", "q-which": ["facts"], "q-errors": [number]}
    sentences = client.post(action, form)
    assert sentences.status_code == 400
    assert "sentence" in sentences.content.decode()
    assert Response.objects.count() == 0
