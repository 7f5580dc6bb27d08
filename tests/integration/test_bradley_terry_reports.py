"""Bradley-Terry strengths with intervals, rank intervals and the position bias through
``computereports`` on PostgreSQL: a ranking study (MOST / LEAST in the shown order) and a
questionnaire's pairwise pick with ties in the recorded passage order; each checked against
statsmodels' logistic regression clustered by item on pairs built here by plain loops, and
the dashboard's table."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory
from tests.helpers.reports import computereports_json, report_row

pytestmark = pytest.mark.django_db
SYSTEMS = ["base", "ft", "rome"]
STRENGTH = {"base": -0.6, "ft": 0.0, "rome": 1.3}


def reference(pairs: list[tuple[str, str, float, str]]) -> tuple[np.ndarray, np.ndarray, int]:
    """Strengths (mean zero), their item-clustered standard errors (CR1) and the items, by
    statsmodels' binomial GLM on (first, second, outcome, item) rows."""
    design = np.zeros((len(pairs), len(SYSTEMS)))
    for r, (first, second, _, _) in enumerate(pairs):
        design[r, SYSTEMS.index(first)] += 1
        design[r, SYSTEMS.index(second)] -= 1
    outcome = np.array([p[2] for p in pairs])
    items = np.unique([p[3] for p in pairs], return_inverse=True)[1]
    model = sm.GLM(outcome, design[:, 1:], family=sm.families.Binomial())
    fitted = model.fit(cov_type="cluster", cov_kwds={"groups": items, "use_correction": False})
    k = len(SYSTEMS)
    centre = np.eye(k) - 1 / k
    full = np.zeros((k, k))
    full[1:, 1:] = fitted.cov_params()
    g = int(items.max()) + 1
    covariance = centre @ full @ centre.T * g / (g - 1)
    return centre @ np.r_[0.0, fitted.params], np.sqrt(np.diag(covariance)), g


def check_strengths(rows: list[dict], prefix: str, group: dict, pairs) -> None:
    strengths, se, items = reference(pairs)
    quantile = stats.t.ppf(0.975, items - 1)
    for n, system in enumerate(SYSTEMS):
        found = report_row(rows, f"{prefix}.strength", **group, system=system)
        assert found["value"] == pytest.approx(strengths[n], abs=2e-3)  # up to the ridge (0.01)
        assert found["ci_low"] == pytest.approx(strengths[n] - quantile * se[n], abs=5e-3)
        assert found["ci_high"] == pytest.approx(strengths[n] + quantile * se[n], abs=5e-3)
        assert found["details"]["items"] == items and found["details"]["ties"] == "halves"
        rank = report_row(rows, f"{prefix}.rank", **group, system=system)
        assert rank["value"] == 1 + sum(s > strengths[n] for s in strengths)
        assert rank["ci_low"] <= rank["value"] <= rank["ci_high"]
    assert report_row(rows, f"{prefix}.rank", **group, system="rome")["ci_high"] == 1  # surely first
    bias = report_row(rows, f"{prefix}.position_bias", **group)
    assert bias["ci_low"] < bias["value"] < bias["ci_high"] and bias["n"] == len(pairs)


def ranking_study():
    """40 items of three systems, 4 answers each, MOST / LEAST from Gumbel utilities, the
    order shown shuffled per answer (``answer.shown``)."""
    study = StudyFactory(kind="ranking", slug="bt-ranking", config={"show": 3})
    passages = [{"system": s, "text": f"{s} text"} for s in SYSTEMS]
    ItemFactory.from_specs(
        study, [{"external_id": f"c{i}", "payload": {"fact": "f", "passages": passages}} for i in range(40)]
    )
    rng = random.Random(3)
    specs, pairs = [], []
    for i in range(40):
        for who in ("ann", "bob", "cat", "dan"):
            shown = rng.sample(SYSTEMS, 3)
            utility = {s: STRENGTH[s] - np.log(-np.log(rng.random())) for s in shown}
            order = sorted(shown, key=utility.get, reverse=True)
            most, least = order[0], order[-1]
            choices = {c: {"most": most, "least": least} for c in ("consistency", "fluency")}
            specs.append(
                {"participant": who, "item": f"c{i}", "answer": {"shown": shown, "choices": choices}}
            )
            rank = {most: 1, least: 3, order[1]: 2}
            for a in range(3):
                for b in range(a + 1, 3):
                    pairs.append((shown[a], shown[b], float(rank[shown[a]] < rank[shown[b]]), f"c{i}"))
    AnsweredResponseFactory.from_specs(study, specs)
    return study, pairs


def test_a_ranking_study_reports_strengths_with_intervals_ranks_and_position_bias():
    study, pairs = ranking_study()
    rows = computereports_json(study)
    check_strengths(rows, "ranking", {"criterion": "fluency"}, pairs)


def questionnaire_study():
    """A pairwise pick with ties on 30 items of two passages (three systems), 5 answers each,
    the passages shown in the order recorded in ``display_order.order``."""
    questions = [{"id": "better", "type": "pick", "pick": "pairwise", "tie": True, "text": "Better?"}]
    study = StudyFactory(kind="questionnaire", slug="bt-pick", config={"questions": questions})
    rng = random.Random(5)
    items, specs, pairs = [], [], []
    for i in range(30):
        two = rng.sample(SYSTEMS, 2)
        items.append(
            {
                "external_id": f"q{i}",
                "payload": {
                    "passages": [{"id": f"p{n}", "text": "T.", "system": s} for n, s in enumerate(two)]
                },
            }
        )
        for who in ("ann", "bob", "cat", "dan", "eve"):
            order = rng.sample(["p0", "p1"], 2)
            first, second = (two[int(pid[1])] for pid in order)
            p_first = 1 / (1 + np.exp(-(STRENGTH[first] - STRENGTH[second] + 0.4)))  # a first-shown bias
            draw = rng.random()
            pick = "tie" if draw < 0.1 else order[0] if draw < 0.1 + 0.9 * p_first else order[1]
            outcome = 0.5 if pick == "tie" else float(pick == order[0])
            pairs.append((first, second, outcome, f"q{i}"))
            specs.append(
                {
                    "participant": who,
                    "item": f"q{i}",
                    "answer": {"better": pick},
                    "display_order": {"order": order},
                }
            )
    ItemFactory.from_specs(study, items)
    AnsweredResponseFactory.from_specs(study, specs)
    return study, pairs


def test_a_pairwise_pick_with_ties_reports_strengths_intervals_and_the_first_shown_bias():
    study, pairs = questionnaire_study()
    rows = computereports_json(study)
    check_strengths(rows, "questionnaire", {"question": "better"}, pairs)
    design = np.zeros((len(pairs), 3))
    for r, (first, second, _, _) in enumerate(pairs):
        design[r, SYSTEMS.index(first)] += 1
        design[r, SYSTEMS.index(second)] -= 1
    design[:, 0] = 1.0  # γ in place of the reference system's column
    outcome = np.array([p[2] for p in pairs])
    gamma = sm.GLM(outcome, design, family=sm.families.Binomial()).fit().params[0]
    bias = report_row(rows, "questionnaire.position_bias", question="better")
    assert bias["value"] == pytest.approx(gamma, abs=5e-3)
    assert bias["details"]["first_share"] == pytest.approx(outcome.mean())


def test_the_dashboard_shows_the_bradley_terry_table_with_intervals(admin_client):
    study, _ = questionnaire_study()
    computereports_json(study)
    html = admin_client.get(f"/research/s/{study.slug}/dashboard/").content.decode()
    start = html.index("Pick questions: Bradley-Terry strengths and ranks per system")
    table = html[start : html.index("</table>", start)]
    text = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[dh][^>]*>.*?</t[dh]>", table, re.S)]
    assert "strength" in text and "rank" in text
    rome = text.index("rome")
    assert re.fullmatch(r"-?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\]", text[rome + 1])
    assert text[rome + 2] == "1 [1–1]"
    assert re.search(r"\d \[\d–\d\]", " ".join(text))
    assert "Position bias: preference for the passage shown first" in html
