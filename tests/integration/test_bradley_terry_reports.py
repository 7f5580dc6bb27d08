"""Bradley-Terry strengths with intervals, rank intervals and the position bias through
``computereports`` on PostgreSQL: a ranking study (MOST / LEAST in the shown order) and a
questionnaire's pairwise pick with ties in the recorded passage order; each checked against
statsmodels' logistic regression clustered by item, or by item and participant where the
raters cross items, on pairs built here by plain loops, and the dashboard's table."""

from __future__ import annotations

import copy
import re
import sqlite3
import zipfile
from collections.abc import Iterator

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from annotation.models import Study
from tests.helpers.bradley_terry import SYSTEMS, questionnaire_study, ranking_study
from tests.helpers.module_data import rows_for_the_module
from tests.helpers.reports import computereports_json, report_row

pytestmark = pytest.mark.django_db


def _design(pairs) -> np.ndarray:
    design = np.zeros((len(pairs), len(SYSTEMS)))
    for r, (first, second, *_) in enumerate(pairs):
        design[r, SYSTEMS.index(first)] += 1
        design[r, SYSTEMS.index(second)] -= 1
    return design


def reference(pairs, *, two_way: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Strengths (mean zero), their cluster-robust standard errors and t degrees of freedom,
    the items and the participants, by statsmodels' binomial GLM on (first, second,
    outcome, item, participant) rows: clustered by item (CR1 G/(G−1), t on G − 1), or two
    ways by item and participant (statsmodels' two-column groups, each part with its own
    G/(G−1); its common (N−1)/(N−K) taken out) with Satterthwaite's degrees of freedom of
    the sum of the parts, written out here, kept between min(G) − 1 and max(G) − 1."""
    design = _design(pairs)
    outcome = np.array([p[2] for p in pairs])
    items = np.unique([p[3] for p in pairs], return_inverse=True)[1]
    people = np.unique([p[4] for p in pairs], return_inverse=True)[1]
    cells = np.unique(items * (people.max() + 1) + people, return_inverse=True)[1]
    model = sm.GLM(outcome, design[:, 1:], family=sm.families.Binomial())
    k = len(SYSTEMS)
    centre = np.eye(k) - 1 / k

    def centred(cov):
        full = np.zeros((k, k))
        full[1:, 1:] = cov
        return centre @ full @ centre.T

    def one_way(groups):
        fitted = model.fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False})
        g = int(groups.max()) + 1
        return centred(fitted.cov_params()) * g / (g - 1), g

    g_item, g_people = int(items.max()) + 1, int(people.max()) + 1
    fitted = model.fit()
    strengths = centre @ np.r_[0.0, fitted.params]
    if not two_way:
        covariance, _ = one_way(items)
        return strengths, np.sqrt(np.diag(covariance)), np.full(k, g_item - 1.0), g_item, g_people
    both = model.fit(cov_type="cluster", cov_kwds={"groups": np.column_stack([items, people])})
    n, parameters = len(pairs), k - 1
    covariance = centred(both.cov_params()) * (n - parameters) / (n - 1)
    parts = [one_way(items), one_way(people), one_way(cells)]
    assert covariance == pytest.approx(parts[0][0] + parts[1][0] - parts[2][0], abs=1e-12)
    total = np.diag(covariance)
    spread = sum(np.diag(part) ** 2 / (g - 1) for part, g in parts)
    df = np.clip(total**2 / spread, min(g_item, g_people) - 1, max(g_item, g_people) - 1)
    return strengths, np.sqrt(total), df, g_item, g_people


def check_strengths(rows: list[dict], prefix: str, group: dict, pairs, *, two_way: bool) -> None:
    strengths, se, df, items, people = reference(pairs, two_way=two_way)
    method = "items x participants" if two_way else "items"
    for n, system in enumerate(SYSTEMS):
        found = report_row(rows, f"{prefix}.strength", **group, system=system)
        quantile = stats.t.ppf(0.975, df[n])
        assert found["value"] == pytest.approx(strengths[n], abs=2e-3)  # up to the ridge (0.01)
        assert found["ci_low"] == pytest.approx(strengths[n] - quantile * se[n], abs=5e-3)
        assert found["ci_high"] == pytest.approx(strengths[n] + quantile * se[n], abs=5e-3)
        assert found["details"]["items"] == items and found["details"]["ties"] == "halves"
        assert found["details"]["participants"] == (people if two_way else 0)
        assert f"({method})" in found["details"]["ci_method"]
        rank = report_row(rows, f"{prefix}.rank", **group, system=system)
        assert rank["value"] == 1 + sum(s > strengths[n] for s in strengths)
        assert rank["ci_low"] <= rank["value"] <= rank["ci_high"]
    assert report_row(rows, f"{prefix}.rank", **group, system="rome")["ci_high"] == 1  # surely first
    bias = report_row(rows, f"{prefix}.position_bias", **group)
    assert bias["ci_low"] < bias["value"] < bias["ci_high"] and bias["n"] == len(pairs)
    assert f"({method})" in bias["details"]["ci_method"]


@pytest.fixture(scope="module")
def pick_rows(django_db_setup, django_db_blocker) -> Iterator[tuple[int, list, list[dict]]]:
    """The pairwise pick study, written once for the module (tests/helpers/module_data.py):
    its primary key, its pairs and its report rows as ``computereports --json`` prints them
    (computed once: three tests read them)."""
    with rows_for_the_module(django_db_blocker):
        study, pairs = questionnaire_study()
        yield study.pk, pairs, computereports_json(study)


@pytest.fixture
def pick(pick_rows) -> tuple[Study, list, list[dict]]:
    """The module's pick study, its pairs and its report rows (copies each test may change)."""
    pk, pairs, rows = pick_rows
    return Study.objects.get(pk=pk), list(pairs), copy.deepcopy(rows)


def test_a_ranking_study_whose_raters_cross_items_clusters_by_item_and_participant():
    study, pairs = ranking_study()
    rows = computereports_json(study)
    check_strengths(rows, "ranking", {"criterion": "fluency"}, pairs, two_way=True)


def test_a_ranking_study_with_a_rater_per_answer_clusters_by_item_only():
    study, pairs = ranking_study(crossed=False)
    rows = computereports_json(study)
    check_strengths(rows, "ranking", {"criterion": "fluency"}, pairs, two_way=False)


def test_a_pairwise_pick_with_ties_reports_strengths_intervals_and_the_first_shown_bias(pick):
    _, pairs, rows = pick
    check_strengths(rows, "questionnaire", {"question": "better"}, pairs, two_way=True)
    design = _design(pairs)
    design[:, 0] = 1.0  # γ in place of the reference system's column
    outcome = np.array([p[2] for p in pairs])
    gamma = sm.GLM(outcome, design, family=sm.families.Binomial()).fit().params[0]
    bias = report_row(rows, "questionnaire.position_bias", question="better")
    assert bias["value"] == pytest.approx(gamma, abs=5e-3)
    assert bias["details"]["first_share"] == pytest.approx(outcome.mean())


def test_the_dashboard_shows_the_bradley_terry_table_with_intervals(admin_client, pick):
    study, _, _ = pick
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


def test_the_api_and_the_sqlite_export_carry_the_intervals(admin_client, admin_user, tmp_path, pick):
    from rest_framework.test import APIClient

    from annotation.services.exports.export import export_study

    study, _, rows = pick
    expected = report_row(rows, "questionnaire.rank", question="better", system="base")
    api = APIClient()
    api.force_authenticate(admin_user)
    page = api.get(f"/api/v1/studies/{study.slug}/reports/", {"metric": "questionnaire.rank"})
    assert page.status_code == 200
    found = {(r["group"]["system"], r["population"]): r for r in page.json()["results"]}
    base = found[("base", "all")]
    assert (base["value"], base["ci_low"], base["ci_high"]) == (
        expected["value"],
        expected["ci_low"],
        expected["ci_high"],
    )
    assert base["details"]["ci_method"].startswith("simultaneous")

    result = export_study(study, fmt="sqlite", path=tmp_path / "out.zip")
    with zipfile.ZipFile(result.path) as archive:
        archive.extractall(tmp_path)
    database = sqlite3.connect(tmp_path / f"{study.slug}.sqlite")
    stored = database.execute(
        "SELECT value, ci_low, ci_high FROM reports WHERE metric = 'questionnaire.position_bias' "
        "AND population = 'all'"
    ).fetchall()
    bias = report_row(rows, "questionnaire.position_bias", question="better")
    assert stored == [(bias["value"], bias["ci_low"], bias["ci_high"])]
