"""A spans (error-span) study on PostgreSQL, end to end: created through the API (bad
definitions and items refused with the field named), answered through the participant
page (a bad span is a 400 naming the question, nothing stored), answers imported (the same
checks), the SQLite export's one row per span, and the report's figures against
independent computations (counts, penalties and scores by hand; alpha from the
``krippendorff`` package over a coders × characters table), shown on the dashboard."""

from __future__ import annotations

import json
import re
import sqlite3
import zipfile

import krippendorff
import numpy as np
import pytest

from annotation.errors import InputError
from annotation.models import Participant, Response, Study
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.exports.sqlite import write_sqlite
from scoring.models import Report
from scoring.services import compute_study_reports
from tests.factories import researcher_user
from tests.helpers.flow import start, task_action

pytestmark = pytest.mark.django_db

TEXTS = {
    "alpha": "Der Hund läuft schnell über die Straße. 🙂 Er bellt laut.",
    "beta": "The dog runs fast across teh street. It barks loud.",
}
QUESTION = {
    "id": "err",
    "type": "spans",
    "text": "Mark the errors of the translation.",
    "categories": ["accuracy", "fluency"],
    "severities": ["minor", "major"],
    "score": True,
}
ITEMS = [
    {
        "external_id": f"i{n}-{system}",
        "payload": {"passages": [{"id": "t", "text": TEXTS[system], "system": system}]},
    }
    for n in range(3)
    for system in ("alpha", "beta")
]


def study_file(slug="spans-study", questions=(QUESTION,), items=ITEMS) -> dict:
    return {
        "slug": slug,
        "title": "Error spans",
        "kind": "questionnaire",
        "status": "live",
        "annotations_per_item": 3,
        "config": {"questions": list(questions)},
        "items": list(items),
        "examples": [
            {
                "title": "A wrong word",
                "payload": ITEMS[0]["payload"],
                "answer": {"err": {"spans": [span(4, 8, "accuracy", "major")], "score": 30}},
                "explanation": "*Hund* is not the word of the source.",
            }
        ],
    }


def span(start, end, category="fluency", severity="minor") -> dict:
    return {"start": start, "end": end, "category": category, "severity": severity}


# Three annotators' answers per item (offsets into the texts above; "🙂" is one character).
ANSWERS = {
    "alpha": [
        {"spans": [span(4, 8, "accuracy", "major")], "score": 40},
        {"spans": [span(4, 8, "accuracy", "minor"), span(42, 50)], "score": 60},
        {"spans": [], "score": 90},
    ],
    "beta": [
        {"spans": [span(25, 28)], "score": 80},
        {"spans": [span(25, 28), span(47, 51, "fluency", "major")], "score": 70},
        {"spans": [span(25, 35)], "score": 75},
    ],
}
ANNOTATORS = ["ann", "bob", "cat"]


@pytest.fixture
def api_study(client):
    client.force_login(researcher_user("rita", password="pw-rita-1"))
    bad_question = {**QUESTION, "categories": []}
    refused = client.post(
        "/api/v1/studies/", study_file(questions=[bad_question]), content_type="application/json"
    )
    assert refused.status_code == 400 and "categories" in json.dumps(refused.json())
    two = {**QUESTION, "passage": 2}
    refused = client.post("/api/v1/studies/", study_file(questions=[two]), content_type="application/json")
    assert refused.status_code == 400 and "marks spans of passage 2" in json.dumps(refused.json())
    assert not Study.objects.exists()
    created = client.post("/api/v1/studies/", study_file(), content_type="application/json")
    assert created.status_code == 201, created.content
    return Study.objects.get(slug="spans-study")


def test_a_spans_study_through_the_page_import_export_and_reports(api_study, client, tmp_path):
    study = api_study
    client.logout()
    # the worked example, read-only: its span marked in the text and listed, no script
    example = client.get(f"/s/{study.slug}/instructions/").content.decode()
    assert '<span class="tok marked" data-start="4" data-end="8">Hund</span>' in example
    assert "<li><q>Hund</q> accuracy, major</li>" in example and 'value="30"' in example
    html = start(client, study.slug)
    assert "data-span-text" in html and 'name="q-err"' in html and 'name="q-err-score"' in html
    system = "alpha" if "Hund" in html else "beta"
    text = TEXTS[system]
    # every token carries its offsets into the text as stored
    tokens = re.findall(r'<span class="tok[^"]*" data-start="(\d+)" data-end="(\d+)">([^<]*)</span>', html)
    assert "".join(t for _, _, t in tokens) == text.replace("'", "&#x27;")
    assert all(text[int(a) : int(b)] == t for a, b, t in tokens if "&" not in t)
    action = task_action(html)
    outside = client.post(action, {"q-err": json.dumps([span(0, 999)]), "q-err-score": "50"})
    assert outside.status_code == 400 and "Mark the errors of the translation" in outside.content.decode()
    bad_category = client.post(action, {"q-err": json.dumps([span(0, 3, "style")]), "q-err-score": "50"})
    assert bad_category.status_code == 400 and "accuracy, fluency" in bad_category.content.decode()
    assert 'name="q-err" value="[{&quot;start&quot;: 0' in bad_category.content.decode()  # kept on the page
    no_score = client.post(action, {"q-err": "[]"})
    assert no_score.status_code == 400 and "overall score" in no_score.content.decode()
    assert not Response.objects.exists()
    good = client.post(action, {"q-err": json.dumps([span(0, 3, "accuracy", "major")]), "q-err-score": "55"})
    assert good.status_code == 302
    stored = Response.objects.get()
    assert stored.answer == {"err": {"spans": [span(0, 3, "accuracy", "major")], "score": 55}}
    stored.delete()

    # imports: the same checks; an overlap is refused and nothing of the file is stored
    lines = [
        json.dumps({"participant": who, "item": item["external_id"], "answer": {"err": ANSWERS[system][n]}})
        for item in ITEMS
        for n, who in enumerate(ANNOTATORS)
        for system in [item["payload"]["passages"][0]["system"]]
    ]
    overlap = {"err": {"spans": [span(0, 8), span(4, 12)], "score": 5}}
    with pytest.raises(InputError, match="may not overlap"):
        import_responses(
            study,
            [*lines, json.dumps({"participant": "dan", "item": "i0-alpha", "answer": overlap})],
            source=Participant.Source.LAB,
        )
    assert not Response.objects.exists()
    assert import_responses(study, lines, source=Participant.Source.LAB).created == 18

    # the SQLite export: one row per span, with the text it covers
    write_sqlite(study, tmp_path / "out.zip", include_platform_ids=False, archive=True)
    with zipfile.ZipFile(tmp_path / "out.zip") as archive:
        archive.extract(f"{study.slug}.sqlite", tmp_path)
        assert (
            "`spans`" in archive.read("README.md").decode() or "spans" in archive.read("README.md").decode()
        )
    rows = (
        sqlite3.connect(tmp_path / f"{study.slug}.sqlite")
        .execute('SELECT item, question, span, start, "end", category, severity, system, text FROM spans')
        .fetchall()
    )
    expected = sorted(
        (
            item["external_id"],
            "err",
            n + 1,
            s["start"],
            s["end"],
            s["category"],
            s["severity"],
            sys_,
            TEXTS[sys_][s["start"] : s["end"]],
        )
        for item in ITEMS
        for sys_ in [item["payload"]["passages"][0]["system"]]
        for answer in ANSWERS[sys_]
        for n, s in enumerate(answer["spans"])
    )
    assert sorted(rows) == expected
    assert ("i0-alpha", "err", 2, 42, 50, "fluency", "minor", "alpha", "Er bellt") in rows  # after the emoji

    # the reports
    compute_study_reports(study)

    def figure(metric, **group):
        found = {
            tuple(sorted(r.group.items())): r
            for r in Report.objects.filter(study=study, metric=metric, population="all")
        }
        return found[tuple(sorted({"question": "err", **group}.items()))]

    assert (
        figure("questionnaire.span_count", system="beta", category="fluency", severity="minor").value == 3 * 3
    )
    assert (
        figure("questionnaire.span_count", system="alpha", category="accuracy", severity="major").value == 3
    )
    penalties = {
        s: [sum({"minor": 1, "major": 5}[x["severity"]] for x in a["spans"]) for a in ANSWERS[s]]
        for s in ANSWERS
    }
    for system_name in ANSWERS:
        mqm = figure("questionnaire.mqm", system=system_name)
        assert mqm.value == pytest.approx(np.mean(penalties[system_name]))
        assert mqm.ci_low is not None and mqm.ci_low <= mqm.value <= mqm.ci_high
        esa = figure("questionnaire.esa", system=system_name)
        assert esa.value == pytest.approx(np.mean([a["score"] for a in ANSWERS[system_name]]))
    # F1 by hand, beta's pairs on each item: (ann, bob) 6/(3+7), (ann, cat) 6/(3+10), (bob, cat) 6/(7+10)
    f1 = figure("questionnaire.span_f1", system="beta")
    assert f1.value == pytest.approx(np.mean([6 / 10, 6 / 13, 6 / 17]))
    # alpha against the krippendorff package: coders × characters of all six passages
    table = []
    for item in ITEMS:
        s = item["payload"]["passages"][0]["system"]
        for who in range(3):
            labels = ["none"] * len(TEXTS[s])
            for x in sorted(ANSWERS[s][who]["spans"], key=lambda x: (x["start"], x["end"]), reverse=True):
                labels[x["start"] : x["end"]] = [x["category"]] * (x["end"] - x["start"])
            table.append(labels)
    codes = {"none": 0, "accuracy": 1, "fluency": 2}
    by_coder = np.array(
        [[codes[v] for i in range(len(ITEMS)) for v in table[i * 3 + c]] for c in range(3)], dtype=float
    )
    expected_alpha = krippendorff.alpha(by_coder, level_of_measurement="nominal")
    assert figure("questionnaire.span_alpha").value == pytest.approx(expected_alpha, abs=1e-9)

    admin = researcher_user("boss", password="pw-boss-1")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    page = client.get(f"/research/s/{study.slug}/dashboard/").content.decode()
    assert "Spans questions: errors marked per system" in page and "MQM-style penalty and ESA score" in page
    assert "Spans questions: agreement on the error spans" in page and "over all answers" in page


def test_an_endpoint_judge_answers_spans_in_json_and_bad_spans_are_refused_and_recorded(settings):
    """The stand-in endpoint replies with the documented JSON form (spans quoted by their
    text): a quote found in the passage becomes offsets and is stored; a quote that is not
    in the passage, or a category not in the list, is refused by the kind and recorded."""
    from annotation.models import Job, ModelOutput
    from annotation.services.analysis.judges import store_endpoint_key
    from annotation.services.jobs import JOB_KINDS, create_job
    from roft_site.celery import app
    from tests.helpers.openai_standin import StandIn, prompt_of

    settings.JUDGE_BACKOFF_S, settings.JUDGE_RETRY_AFTER_MAX_S, settings.JUDGE_TIMEOUT_S = 0.001, 0, 10.0
    owner = researcher_user("judy", password="pw-judy-1")
    owner.is_staff = True
    owner.save()
    from annotation.services.authoring.studies import load_study_file

    texts = {"ok": "Der Hund läuft.", "elsewhere": "The dog runs.", "style": "Er bellt laut."}
    items = [
        {"external_id": k, "payload": {"passages": [{"id": "t", "text": t, "system": "s"}]}}
        for k, t in texts.items()
    ]
    study = load_study_file(study_file(slug="spans-judged", items=items)).study
    study.owner = owner
    study.save(update_fields=["owner"])
    replies = {
        "Hund": '{"spans": [{"text": "Hund", "category": "accuracy", "severity": "major"}], "score": 60}',
        "dog": 'Here: {"spans": [{"text": "cat", "category": "fluency", "severity": "minor"}], "score": 5}',
        "bellt": '{"spans": [{"text": "Er", "category": "style", "severity": "minor"}], "score": 9}',
    }

    def reply(body: dict) -> str:
        prompt = prompt_of(body)
        assert '"category": one of ["accuracy", "fluency"]' in prompt and "0 to 100" in prompt
        turn = prompt.rsplit("Passage A:", 1)[-1]
        return next(answer for key, answer in replies.items() if key in turn)

    with StandIn(reply) as standin:
        store_endpoint_key(owner, base_url=standin.url + "/", key="sk-test-1")
        parameters = {"base_url": standin.url, "model": "judge-x", "samples": 1}
        job = create_job(kind="judge", parameters=parameters, study=study, user=owner)
        app.tasks[JOB_KINDS["judge"].task].apply(args=[job.pk])
    job.refresh_from_db()
    assert job.status == Job.Status.DONE, job.error
    outputs = {
        o.item.external_id: o
        for o in ModelOutput.objects.filter(study=study).select_related("item", "response")
    }
    stored = outputs["ok"].response.answer
    assert stored == {"err": {"spans": [span(4, 8, "accuracy", "major")], "score": 60}}
    assert (
        outputs["elsewhere"].response is None and "'cat' is not in the passage" in outputs["elsewhere"].error
    )
    assert outputs["style"].response is None and "accuracy, fluency" in outputs["style"].error
    assert job.result["invalid"] == 2 and Response.objects.filter(study=study).count() == 1


def test_the_llm_rater_answers_spans_by_generation_only():
    """Scoring by log-probability needs options to score; a spans question has none, so a
    ``logprob`` rater is refused before any model is loaded, naming ``scoring``."""
    from annotation.job_parameters import RateLLMParameters
    from annotation.services.authoring.studies import load_study_file
    from workers.raters.llm import llm_rater

    study = load_study_file(study_file(slug="spans-llm", items=ITEMS[:1])).study
    settings = {"model": "tiny", "shots": 0, "seed": 0, "batch_size": 8, "max_new_tokens": 300}
    with pytest.raises(InputError) as refused:
        llm_rater(study, RateLLMParameters(scoring="logprob", **settings))
    assert "scoring" in refused.value.errors
    assert llm_rater(study, RateLLMParameters(scoring="generate", **settings)).lm is None
