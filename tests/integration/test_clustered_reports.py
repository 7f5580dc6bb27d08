"""Scale figures that respect items and participants, end to end on PostgreSQL: a Likert
and a questionnaire study whose items differ a lot (every answer to a case shares the
case's own effect), reported through ``manage.py computereports``. Their mean intervals are
cluster-robust (wider than one that treats answers as independent), and the system pairs
carry a difference with its interval and two-sided Wilcoxon p-values Holm-adjusted over the
question's pairs, which the dashboard's pair table shows once per pair."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from annotation.models import Participant
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.authoring.studies import load_study_file
from tests.helpers.reports import (
    CLUSTERED_CASES,
    CLUSTERED_SYSTEMS,
    clustered_answers,
    clustered_likert_study,
    computereports_json,
    report_row,
)

pytestmark = pytest.mark.django_db
SYSTEMS = CLUSTERED_SYSTEMS
CASES = CLUSTERED_CASES


def _naive_width(values: list[int]) -> float:
    """The t interval's width when answers are treated as independent."""
    low, high = stats.t.interval(0.95, len(values) - 1, np.mean(values), stats.sem(values))
    return high - low


def _case_means(answers, system: str) -> np.ndarray:
    return np.array(
        [np.mean([v for _, c, s, v in answers if (c, s) == (case, system)]) for case in range(CASES)]
    )


def _check_pairs(rows: list[dict], prefix: str, question: str, answers) -> None:
    """Each pair both ways with one two-sided p; Holm over the three pairs as statsmodels
    computes it; A's advantage found with an interval above zero."""
    raw = []
    for system, over in (("A", "B"), ("A", "C"), ("B", "C")):
        found = report_row(rows, f"{prefix}.difference", question=question, system=system, over=over)
        back = report_row(rows, f"{prefix}.difference", question=question, system=over, over=system)
        first, second = _case_means(answers, system), _case_means(answers, over)
        expected = stats.wilcoxon(first, second, alternative="two-sided", method="asymptotic").pvalue
        assert found["details"]["p_value"] == pytest.approx(expected)
        assert back["details"]["p_value"] == found["details"]["p_value"]
        assert found["details"]["alternative"] == "two-sided"
        assert found["value"] == pytest.approx(np.mean(first - second)) == pytest.approx(-back["value"])
        assert found["ci_low"] < found["value"] < found["ci_high"]
        assert found["n"] == CASES
        old = report_row(rows, f"{prefix}.wilcoxon", question=question, system=system, over=over)
        assert old["value"] == pytest.approx(expected)
        raw.append((found, expected))
    adjusted = multipletests([p for _, p in raw], method="holm")[1]
    for (found, _), p_holm in zip(raw, adjusted, strict=True):
        assert found["details"]["p_holm"] == pytest.approx(p_holm)
    assert raw[0][0]["ci_low"] > 0 and raw[0][0]["details"]["p_holm"] < 0.05


def _check_means(rows: list[dict], metric: str, question: str, answers) -> None:
    for system in SYSTEMS:
        mean = report_row(rows, metric, question=question, system=system)
        values = [v for _, _, s, v in answers if s == system]
        assert mean["value"] == pytest.approx(np.mean(values))
        assert mean["details"]["ci_method"] == "cluster-robust t (items x participants)"
        assert mean["ci_high"] - mean["ci_low"] > 1.5 * _naive_width(values)
    pooled = report_row(rows, metric, question=question)
    # the three items of a case share it (provenance.source_id): the case is the cluster
    everything = [v for *_, v in answers]
    assert pooled["ci_high"] - pooled["ci_low"] > 2 * _naive_width(everything)


def test_likert_means_are_clustered_and_pairs_two_sided_and_holm_adjusted(admin_client):
    study = clustered_likert_study()
    answers = clustered_answers()
    rows = computereports_json(study)
    _check_means(rows, "likert.mean", "edit", answers)
    _check_pairs(rows, "likert", "edit", answers)

    page = admin_client.get(f"/research/s/{study.slug}/dashboard/").content.decode()
    table = page.split("Paired comparisons: difference in rating", 1)[1].split("</table>", 1)[0]
    assert "two-sided Wilcoxon signed-rank test, Holm-adjusted" in page
    assert "p (Holm-adjusted)" in table
    # each pair once, in the direction of the positive difference (A over B, A over C)
    assert table.count("<tr") == 1 + 3
    a_over_b = report_row(rows, "likert.difference", question="edit", system="A", over="B")
    interval = f"[{a_over_b['ci_low']:.3f}, {a_over_b['ci_high']:.3f}]"
    assert f'{a_over_b["value"]:.3f} <span class="ci">{interval}</span>' in table


def _questionnaire(slug: str, paired: bool) -> dict:
    return {
        "slug": slug,
        "title": "clustered",
        "kind": "questionnaire",
        "status": "live",
        "annotations_per_item": 3,
        "config": {"questions": [{"id": "quality", "type": "scale", "points": 7, "text": "Good?"}]},
        "items": [
            {
                "external_id": f"c{case}-{system}",
                **({"provenance": {"source_id": f"c{case}"}} if paired else {}),
                "payload": {"passages": [{"id": "only", "text": "One. Two.", "system": system}]},
            }
            for case in range(CASES)
            for system in SYSTEMS
        ],
    }


def _reported(data: dict, answers) -> list[dict]:
    study = load_study_file(data).study
    lines = [
        json.dumps({"participant": who, "item": f"c{case}-{system}", "answer": {"quality": value}})
        for who, case, system, value in answers
    ]
    import_responses(study, lines, source=Participant.Source.LAB)
    return computereports_json(study)


def test_questionnaire_scale_means_are_clustered_and_pairs_two_sided_and_holm_adjusted():
    answers = clustered_answers()
    rows = _reported(_questionnaire("clustered-quest", paired=True), answers)
    _check_means(rows, "questionnaire.mean", "quality", answers)
    _check_pairs(rows, "questionnaire", "quality", answers)


def test_systems_on_different_items_are_compared_unpaired_on_item_means():
    """Without provenance.source_id every item is its own case: each pair of systems is
    compared on its items (Mann-Whitney on the item means), Holm over the three pairs."""
    answers = clustered_answers()
    rows = _reported(_questionnaire("unpaired-quest", paired=False), answers)
    raw = []
    for system, over in (("A", "B"), ("A", "C"), ("B", "C")):
        found = report_row(rows, "questionnaire.difference", question="quality", system=system, over=over)
        first, second = _case_means(answers, system), _case_means(answers, over)
        expected = stats.mannwhitneyu(first, second, alternative="two-sided", method="asymptotic").pvalue
        assert found["details"]["design"] == "unpaired" and found["details"]["test"] == "mann-whitney u"
        assert found["details"]["p_value"] == pytest.approx(expected)
        assert found["value"] == pytest.approx(np.mean(first) - np.mean(second))
        assert found["n"] == 2 * CASES
        raw.append((found, expected))
    adjusted = multipletests([p for _, p in raw], method="holm")[1]
    assert [f["details"]["p_holm"] for f, _ in raw] == pytest.approx(list(adjusted))
    assert not [r for r in rows if r["metric"] == "questionnaire.wilcoxon"]
