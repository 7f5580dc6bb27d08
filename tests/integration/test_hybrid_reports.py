"""Humans on a subset of a Likert study's items, a judge (a model participant) on every item:
the stored reports, the API's report rows and the dashboard give each mean and difference
with three intervals (humans only, judge only, prediction-powered) and the judge's worth."""

from __future__ import annotations

import numpy as np
import pytest

from annotation.models import Item
from annotation.services.analysis.model_answers import ModelAnswer, model_participant, store_model_answers
from scoring.services import compute_study_reports
from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory

pytestmark = pytest.mark.django_db

JUDGE = {"kind": "llm", "model": "/models/judge-lm", "version": "hybrid-v1"}
ITEMS = 40
HUMAN_ITEMS = 14


def hybrid_study(owner):
    rng = np.random.default_rng(38)
    study = StudyFactory(
        kind="likert",
        slug="hybrid",
        owner=owner,
        annotations_per_item=2,
        config={"questions": [{"id": "fluent", "text": "How fluent is it?", "passage": "main"}]},
    )
    payload = {"new_fact": "f", "old_facts": [], "main_passage": "p"}
    specs = [
        {
            "external_id": f"i{k}",
            "payload": payload,
            "provenance": {"system": "AB"[k % 2], "source_id": f"c{k}"},
        }
        for k in range(ITEMS)
    ]
    ItemFactory.from_specs(study, specs)
    quality = np.clip(np.round(4 + rng.normal(0, 1.2, ITEMS)), 1, 6).astype(int)
    AnsweredResponseFactory.from_specs(
        study,
        [
            {
                "participant": f"h{(k + j) % 5}",
                "item": f"i{k}",
                "answer": {"ratings": {"fluent": int(quality[k] + j)}},
            }
            for j in (0, 1)
            for k in range(HUMAN_ITEMS)
        ],
    )
    items = {item.external_id: item for item in Item.objects.filter(study=study)}
    judge = model_participant(JUDGE)
    answers = [
        ModelAnswer(items[f"i{k}"], raw="", answer={"ratings": {"fluent": int(min(7, quality[k] + 1))}})
        for k in range(ITEMS)
    ]
    assert store_model_answers(study, judge, answers).created == ITEMS
    return study, judge


def test_reports_api_and_dashboard_show_three_intervals(client, researcher):
    study, judge = hybrid_study(researcher)
    compute_study_reports(study)
    rows = []
    for metric in ("hybrid.mean", "hybrid.mean_humans", "hybrid.mean_judge", "hybrid.difference"):
        query = {"population": "passed", "metric": metric}
        rows += client.get(f"/api/v1/studies/{study.slug}/reports/", query).json()["results"]
    rater = judge.platform_worker_id
    pooled = {
        r["metric"]: r
        for r in rows
        if r["metric"].startswith("hybrid.mean")
        and r["group"] == {"question": "fluent", "system": "all systems", "rater": rater}
    }
    assert set(pooled) == {"hybrid.mean", "hybrid.mean_humans", "hybrid.mean_judge"}
    ppi, humans, judged = pooled["hybrid.mean"], pooled["hybrid.mean_humans"], pooled["hybrid.mean_judge"]
    assert humans["n"] == ppi["n"] == 2 * HUMAN_ITEMS and judged["n"] == ITEMS
    assert ppi["ci_high"] - ppi["ci_low"] < humans["ci_high"] - humans["ci_low"]
    assert ppi["details"]["effective_n"] > 2 * HUMAN_ITEMS
    assert (
        ppi["details"]["judge_low"] == judged["ci_low"] and ppi["details"]["humans_high"] == humans["ci_high"]
    )
    # the judge rates half a point higher than the humans; the combined figure takes that out
    assert judged["value"] > ppi["value"] + 0.3
    assert ppi["details"]["rectifier"] == pytest.approx(-0.5, abs=0.2)
    assert any(
        r["metric"] == "hybrid.difference" and r["group"].get("over") == "B" and r["ci_low"] is not None
        for r in rows
    )
    html = client.get(f"/research/s/{study.slug}/dashboard/", {"population": "passed"}).content.decode()
    assert "Humans and judge combined: mean per question and system" in html
    assert "Humans and judge combined: difference between systems" in html
