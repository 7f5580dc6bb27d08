"""Issue 38 end to end: a pairwise questionnaire (a pick, and a scale asked under each
passage) loaded with a 20% human subset; people answer the drawn pages through the
participant pages; a judge answers every page through the stand-in endpoint in both orders
with k = 3 samples; the reports give humans-only, judge-only and prediction-powered intervals
with the effective number of human answers, read back through the API.

The judge's position swap reads a per-passage answer of the swapped page back to the passage
it was about (answers are keyed by passage id): a judge that rates by the text it reads
gives each passage the same points in both orders, so its answers and its swap consistency
say whether the letters were mapped back right."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotation.models import Item, Job, ModelOutput, Response
from annotation.services.authoring.human_subset import uniform_draw
from annotation.services.authoring.studies import load_study_file
from annotation.services.jobs import JOB_KINDS, create_job
from roft_site.celery import app
from scoring.services import compute_study_reports
from tests.helpers.flow import start, task_action
from tests.helpers.openai_standin import StandIn, prompt_of

pytestmark = pytest.mark.django_db

ITEMS, SEED = 20, 25  # this seed draws 4 of the 20 pages for people (20%)
QUESTIONS = [
    {"id": "fluency", "type": "scale", "per": "passage", "points": 5, "text": "How fluent is this reply?"},
    {"id": "better", "type": "pick", "pick": "pairwise", "tie": True, "text": "Which reply is better?"},
]
LETTERED = re.compile(r"^Passage ([A-Z]):\n(.*)$", re.MULTILINE)


def crisp_first(n: int) -> bool:
    return n % 4 != 0  # system alpha writes the crisp reply on three pages of four


def study_file() -> dict:
    def passages(n: int) -> list[dict]:
        texts = (f"A crisp reply {n}.", f"A muddled reply {n}.")
        alpha, beta = texts if crisp_first(n) else texts[::-1]
        return [
            {"id": f"x{n}", "text": alpha, "system": "alpha"},
            {"id": f"y{n}", "text": beta, "system": "beta"},
        ]

    return {
        "slug": "judged-subset",
        "title": "Which reply is better?",
        "kind": "questionnaire",
        "status": "live",
        "annotations_per_item": 2,
        "items_per_session": 2,  # four people on the eight answers wanted, two pages each
        "config": {"questions": QUESTIONS},
        "human_subset": {"fraction": 0.2, "seed": SEED},
        "items": [
            {"external_id": f"p{n}", "payload": {"context": f"Prompt {n}", "passages": passages(n)}}
            for n in range(ITEMS)
        ],
    }


def judge_reads_the_text(body: dict) -> str:
    """The stand-in judge: the crisp passage is better and fluent (5), the muddled one 2."""
    prompt = prompt_of(body)
    asked = prompt.rsplit("Question:", 1)[-1]
    letters = {letter: text for letter, text in LETTERED.findall(prompt.rsplit("Now your turn:", 1)[-1])}
    about = re.search(r"About passage ([A-Z]):", asked)
    if about:
        return "5" if "crisp" in letters[about[1]] else "2"
    return next(letter for letter, text in letters.items() if "crisp" in text)


def answer_as_person(client, slug: str, person: int) -> list[str]:
    """Answer every page the study serves this person over HTTP, as they would: the crisp
    reply 4 or 5, the muddled one 1 or 2, the crisp one picked (person 1 picks a tie once)."""
    html, answered = start(client, slug), []
    while 'action="/s/' in html:
        cards = re.findall(r'<article class="passage-card">(.*?)</article>', html, re.S)
        crisp = next(n for n, card in enumerate(cards) if "crisp" in card)
        letters = ["A", "B"]
        fields = {
            f"q-fluency-{letters[crisp]}": str(4 + person % 2),
            f"q-fluency-{letters[1 - crisp]}": str(1 + (len(answered) + person) % 2),
            "q-better": "tie" if (person, len(answered)) == (1, 0) else letters[crisp],
        }
        posted = client.post(task_action(html), fields, follow=True)
        assert posted.status_code == 200
        answered.append(re.search(r"Prompt (\d+)", html)[1])
        html = posted.content.decode()
    return answered


def rows(client, slug: str, metric: str) -> list[dict]:
    got = client.get(f"/api/v1/studies/{slug}/reports/", {"population": "passed", "metric": metric})
    return got.json()["results"]


def test_a_judged_questionnaire_with_humans_on_a_fifth_reports_three_intervals(client, researcher, settings):
    settings.JUDGE_BACKOFF_S, settings.JUDGE_RETRY_AFTER_MAX_S, settings.JUDGE_TIMEOUT_S = 0.001, 0, 10.0
    study = load_study_file(study_file(), owner=researcher).study
    drawn = {f"p{n}" for n in range(ITEMS) if uniform_draw(SEED, f"p{n}") < 0.2}
    assert (
        set(Item.objects.filter(study=study, for_humans=True).values_list("external_id", flat=True)) == drawn
    )
    assert len(drawn) == 4

    served = [page for person in range(4) for page in answer_as_person(Client(), study.slug, person)]
    assert sorted(served) == sorted(2 * [page[1:] for page in drawn])  # the drawn pages only
    assert Response.objects.filter(study=study).count() == 8

    with StandIn(judge_reads_the_text) as standin:
        parameters = {"base_url": standin.url, "model": "judge-x", "samples": 3, "seed": 5}
        job = create_job(kind="judge", parameters=parameters, study=study, user=researcher)
        app.tasks[JOB_KINDS["judge"].task].apply(args=[job.pk])
        job.refresh_from_db()
        # 20 pages × 2 orders × (the pick and the scale under A and under B) × 3 samples
        assert job.status == Job.Status.DONE and standin.count == ITEMS * 2 * 3 * 3, job.error
    assert (job.result["created"], job.result["failed"]) == (ITEMS, 0)
    assert job.result["swap_consistency"]["rate"] == 1.0
    for output in ModelOutput.objects.filter(study=study).select_related("item"):
        n = int(output.item.external_id[1:])
        crisp, muddled = (f"x{n}", f"y{n}") if crisp_first(n) else (f"y{n}", f"x{n}")
        # by passage id in both orders: the swapped page's letters read back to their passages
        assert output.response.answer == {"fluency": {crisp: 5, muddled: 2}, "better": crisp}
        assert set(output.details["swap"].values()) == {True} and output.details["orders"] == 2

    compute_study_reports(study)
    rater = job.result["participant"]
    for metric, group, (lowest, highest) in (
        ("hybrid.mean", {"question": "fluency", "system": "alpha", "rater": rater}, (1, 5)),
        (
            "hybrid.difference",
            {"question": "fluency", "system": "alpha", "over": "beta", "rater": rater},
            (-4, 4),
        ),
        (
            "hybrid.win_rate",
            {"question": "better", "system": "alpha", "over": "beta", "rater": rater},
            (0, 1),
        ),
    ):
        three = {r["metric"]: r for r in rows(client, study.slug, metric) if r["group"] == group}
        three |= {
            r["metric"]: r
            for suffix in ("_humans", "_judge")
            for r in rows(client, study.slug, metric + suffix)
            if r["group"] == group
        }
        assert set(three) == {metric, f"{metric}_humans", f"{metric}_judge"}, (metric, three)
        ppi, humans, judged = three[metric], three[f"{metric}_humans"], three[f"{metric}_judge"]
        assert all(
            r["ci_low"] is not None and r["ci_low"] <= r["value"] <= r["ci_high"] for r in three.values()
        )
        # every interval within what the figure can be (a 1-5 scale, a share), as the humans' own are
        assert all(lowest <= r["ci_low"] and r["ci_high"] <= highest for r in three.values()), three
        assert judged["n"] > humans["n"] == ppi["n"]
        assert ppi["details"]["effective_n"] >= humans["n"]
        assert ppi["ci_high"] - ppi["ci_low"] <= (humans["ci_high"] - humans["ci_low"]) * 1.02
    strengths = [r for r in rows(client, study.slug, "hybrid.strength") if r["group"]["question"] == "better"]
    assert {r["group"]["system"] for r in strengths} == {"alpha", "beta"}
    assert {r["details"]["design"] for r in strengths} == {
        "inclusion probabilities logged per item"
    }  # weighted
    # the plan page answers the hybrid question for the per-passage scale, by passage system
    target = {
        "question": "fluency",
        "judge_answers": "400",
        "first": "alpha",
        "second": "beta",
        "difference": "1",
    }
    plan = client.get(f"/research/s/{study.slug}/plan/", target).content.decode()
    assert 'id="plan-hybrid-humans">' in plan and "beside 400 judge answers" in plan
