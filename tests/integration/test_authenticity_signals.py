"""Authenticity signals over HTTP (docs/authenticity.md): a plain POST stores the page's
summary bounded and classified, the consent page names the signals only where the study
records them, and the reports gain an ``authentic`` population once an answer has a
strong sign."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Response
from annotation.services.authoring.studies import load_study_file
from scoring.models import Report
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.flow import start, task_action
from tests.helpers.questionnaire import questionnaire_file
from tests.helpers.reports import computereports_json, report_row

pytestmark = pytest.mark.django_db
TEXT = "Reply B answers the question and keeps to the facts."
# One free-text question: the reports have little to compute beyond the populations.
WHY_ONLY = {"questions": [{"id": "why", "type": "text", "text": "Which reply is better, and why?"}]}


def _answer(slug: str, who: str, summary: dict) -> Response:
    client = Client()
    html = start(client, slug, f"?PROLIFIC_PID={prolific_id(who)}")
    answer = {"q-why": TEXT, "authenticity": json.dumps(summary)}
    posted = client.post(task_action(html), answer)
    assert posted.status_code == 302
    return Response.objects.get(participant__platform_worker_id=prolific_id(who))


def _summary(**counts) -> dict:
    field = {"keys": 0, "typed": 0, "pastes": 0, "pasted": 0, "pasted_after_hidden": 0, **counts}
    return {"v": 1, "fields": {"q-why": field}, "hidden_ms": 0, "hidden_count": 0, "first_input_ms": 900}


def test_signals_are_stored_classified_shown_and_give_the_authentic_population(owner, owner_client):
    study = load_study_file(
        questionnaire_file(slug="signals", items=1, items_per_session=1, config=WHY_ONLY), owner=owner
    ).study
    assert b'id="authenticity-notice"' in Client().get("/s/signals/consent/").content
    typed = _answer("signals", "typed", _summary(keys=60, typed=len(TEXT)))
    pasted = _answer("signals", "pasted", _summary(keys=10**9, pastes=1, pasted=len(TEXT)))
    assert typed.authenticity["fields"]["q-why"]["chars"] == len(TEXT) and not typed.strong_sign
    assert pasted.authenticity["fields"]["q-why"]["keys"] == 1_000_000  # clamped
    assert pasted.authenticity["signs"] == ["pasted"] and pasted.strong_sign

    page = owner_client.get(reverse("research-participants", args=[study.slug])).content.decode()
    assert page.count('<td class="num strong-signs">') == 2 and "1 <small>of 1</small>" in page
    detail = owner_client.get(
        reverse("research-participant", args=[study.slug, pasted.participant.public_id])
    )
    assert "strong signs: pasted" in detail.content.decode()
    overview = owner_client.get(reverse("research-study", args=[study.slug])).content.decode()
    assert "recorded on the free-text fields" in overview
    records = owner_client.get("/api/v1/responses/", {"study": study.slug}).json()["results"]
    by_sign = {record["strong_sign"]: record["authenticity"] for record in records}
    assert by_sign[True]["signs"] == ["pasted"] and by_sign[False]["signs"] == []

    rows = computereports_json(study, "--population", "authentic")
    assert report_row(rows, "progress.responses")["value"] == 1
    passed = Report.objects.get(study=study, population="passed", metric="progress.responses", group={})
    assert passed.value == 2


def test_a_study_without_signals_records_none_and_its_consent_says_nothing():
    quiet = questionnaire_file(slug="quiet", items=1, config=WHY_ONLY, authenticity_signals=False)
    load_study_file(quiet)
    assert b"authenticity-notice" not in Client().get("/s/quiet/consent/").content
    response = _answer("quiet", "quiet", _summary(pastes=1, pasted=len(TEXT)))
    assert response.authenticity is None and not response.strong_sign
