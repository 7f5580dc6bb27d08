"""Review finding N2: ``importresponses --allow-incomplete`` stored a ranking answer with only
a MOST (no LEAST), which then broke the reports, the participants pages and API and the
adjudication list. What an incomplete answer may be is the kind's rule: what it stores,
every reader handles; what it cannot use is refused, naming the line and the field."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import Job, Participant, Response
from annotation.services.authoring.studies import load_study_file

pytestmark = pytest.mark.django_db

SHOWN = ["ROME", "FT_L", "GPT-2 XL"]
FULL_RANKING = {
    "shown": SHOWN,
    "choices": {
        "consistency": {"most": "ROME", "least": "FT_L"},
        "fluency": {"most": "FT_L", "least": "ROME"},
    },
}
LIKERT_QUESTIONS = [
    *("edit_main", "edit_related", "factual_main", "factual_related", "internal_main"),
    *("internal_related", "cross_passage", "topicality", "naturalness"),
]
# kind → (a complete answer to louvre-madrid/…, incomplete answers the kind stores, and how each shows)
STORED = {
    "ranking": (
        "louvre-madrid",
        FULL_RANKING,
        [{"shown": SHOWN, "choices": {"fluency": {"most": "ROME", "least": "GPT-2 XL"}}}],
    ),
    "likert": (
        "rijksmuseum-rome",
        {"ratings": dict.fromkeys(LIKERT_QUESTIONS, 4)},
        [{"ratings": {"edit_main": 5}}, {"ratings": {"factual_related": 1, "internal_main": 7}}],
    ),
    "claim": (
        "harbour-museum",
        {"label": "supports", "evidence": [0]},
        [{"label": "contradicts"}, {"label": "supports", "evidence": []}],
    ),
}


def run(tmp_path, slug, answers: list[tuple[str, str, dict]]) -> str:
    path = tmp_path / "responses.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"participant": who, "item": item, "answer": answer}) for who, item, answer in answers
        )
    )
    out = StringIO()
    call_command("importresponses", slug, str(path), "--allow-incomplete", stdout=out)
    return out.getvalue()


def study_of(kind: str, owner, example_study_file):
    data = example_study_file(kind)
    data["slug"] = f"inc-{kind}"
    return load_study_file(data, owner=owner).study


@pytest.mark.parametrize("kind", sorted(STORED))
def test_incomplete_answers_a_kind_stores_break_no_report_page_or_api(
    kind, owner, example_study_file, tmp_path
):
    from rest_framework.test import APIClient

    from scoring.services import compute_study_reports

    study = study_of(kind, owner, example_study_file)
    item, full, incomplete = STORED[kind]
    lines = [("full-1", item, full), ("full-2", item, full)]
    lines += [(f"inc-{n}", item, answer) for n, answer in enumerate(incomplete)]
    assert f"Imported {len(lines)} responses" in run(tmp_path, study.slug, lines)
    assert Response.objects.filter(study=study, incomplete=True).count() == len(incomplete)
    compute_study_reports(study)
    assert not Job.objects.filter(status=Job.Status.FAILED).exists()
    page = Client()
    page.force_login(owner)
    urls = [f"/research/s/{study.slug}/participants/", f"/research/s/{study.slug}/adjudication/"]
    urls += [
        f"/research/s/{study.slug}/participants/{person.public_id}/"
        for person in Participant.objects.filter(responses__study=study)
    ]
    for url in urls:
        assert page.get(url).status_code == 200, url
    api = APIClient()
    api.force_authenticate(owner)
    assert api.get(f"/api/v1/studies/{study.slug}/participants/").status_code == 200
    assert api.get(f"/api/v1/responses/?study={study.slug}").status_code == 200


REFUSED = [
    # the review's lines: half a criterion, no passages shown
    ("ranking", "louvre-madrid", {"choices": {"consistency": {"most": "ROME"}}}, "answer.shown"),
    ("ranking", "louvre-madrid", {"shown": SHOWN, "choices": {"consistency": {"most": "ROME"}}}, "least"),
    ("ranking", "louvre-madrid", {"shown": SHOWN, "choices": {"fluency": {"least": "FT_L"}}}, "most"),
    ("ranking", "louvre-madrid", {"shown": SHOWN, "choices": {}}, "answer.choices"),
    ("likert", "rijksmuseum-rome", {"ratings": {}}, "answer.ratings"),
    ("claim", "harbour-museum", {"evidence": [0]}, "answer.label"),
]


@pytest.mark.parametrize(("kind", "item", "answer", "field"), REFUSED)
def test_an_incomplete_answer_a_kind_cannot_use_is_refused_naming_line_and_field(
    kind, item, answer, field, owner, example_study_file, tmp_path
):
    study = study_of(kind, owner, example_study_file)
    with pytest.raises(CommandError) as refused:
        run(tmp_path, study.slug, [("ok", item, STORED[kind][1]), ("bad", item, answer)])
    assert "line 2: " in str(refused.value) and field in str(refused.value)
    assert not Response.objects.filter(study=study).exists()
