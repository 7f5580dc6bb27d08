"""Humans on a subset of a Likert study's items, a judge (a model participant) on every item:
the stored reports, the API's report rows and the dashboard give each mean and difference
with three intervals (humans only, judge only, prediction-powered) and the judge's worth."""

from __future__ import annotations

import pytest

from scoring.services import compute_study_reports
from tests.helpers.hybrid import HUMAN_ITEMS, ITEMS, hybrid_study

pytestmark = pytest.mark.django_db


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
    assert judged["value"] > ppi["value"]
    assert ppi["details"]["rectifier"] == pytest.approx(-0.5, abs=0.25)
    assert any(
        r["metric"] == "hybrid.difference" and r["group"].get("over") == "B" and r["ci_low"] is not None
        for r in rows
    )
    html = client.get(f"/research/s/{study.slug}/dashboard/", {"population": "passed"}).content.decode()
    assert "Humans and judge combined: mean per question and system" in html
    assert "Humans and judge combined: difference between systems" in html
    # the three intervals under their own names; the judge's worth in whole human answers
    for label in ("prediction-powered", "humans only", "judge only", "λ (judge&#x27;s weight)"):
        assert f'<th class="num" scope="col">{label}</th>' in html
    assert f'<td class="num">{round(ppi["details"]["effective_n"])}</td>' in html
