"""Grouped agreement, reliability and human-machine figures through computereports (JSON and
CSV), the API and the dashboard, on PostgreSQL, each checked against a reference
(krippendorff, scikit-learn, the textbook formulas)."""

import copy
import csv
import itertools
import json
from collections.abc import Iterator
from io import StringIO

import krippendorff
import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from annotation.models import Participant, Study
from annotation.services.pseudonyms import pseudonym
from scoring.models import Report
from stats.bootstrap import UNIT_RESAMPLES, seed_for
from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory
from tests.helpers.module_data import rows_for_the_module
from tests.helpers.reports import computereports_json, report_row

pytestmark = pytest.mark.django_db

HUMANS = ("h0", "h1", "h2")
QUESTIONS = {"edit": "consistency", "fact": "consistency", "natural": "fluency"}
SYSTEMS = ("ROME", "FT")
CASES = 8
SCALE = list(range(1, 8))


def _ratings() -> dict:
    """rater → item → question → rating: humans near a per-item truth, the judge a bit off."""
    rng = np.random.default_rng(13)
    truth = {
        (f"{s}-{c}", q): int(rng.integers(2, 7)) for s in SYSTEMS for c in range(CASES) for q in QUESTIONS
    }
    ratings: dict = {}
    for rater in (*HUMANS, "judge"):
        spread = 2 if rater == "judge" else 1
        for (item, question), value in truth.items():
            noisy = int(np.clip(value + rng.integers(-spread, spread + 1), 1, 7))
            ratings.setdefault(rater, {}).setdefault(item, {})[question] = noisy
    return ratings


RATINGS = _ratings()
ITEMS = sorted(RATINGS["h0"])


@pytest.fixture(scope="module")
def module_rows(django_db_setup, django_db_blocker) -> Iterator[tuple[int, int, list[dict]]]:
    """The owner and the study with everyone's ratings, written once for the module
    (tests/helpers/module_data.py): the primary keys of both, and the study's report rows as
    ``computereports --json`` prints them (computed once: the tests read them)."""
    with rows_for_the_module(django_db_blocker):
        owner = get_user_model().objects.create_user("owner", password="pw", is_staff=True)
        study = _rated_study(owner)
        yield owner.pk, study.pk, computereports_json(study)


@pytest.fixture
def computed(module_rows) -> list[dict]:
    """The module study's report rows (a copy each test may change)."""
    return copy.deepcopy(module_rows[2])


def _rated_study(owner) -> Study:
    questions = [{"id": q, "text": "…", "passage": "main", "group": g} for q, g in QUESTIONS.items()]
    study = StudyFactory(kind="likert", slug="leme-agree", owner=owner, config={"questions": questions})
    ItemFactory.from_specs(
        study,
        [
            {
                "external_id": item,
                "payload": {"new_fact": "f", "old_facts": [], "main_passage": "p"},
                "provenance": {"system": item.split("-")[0], "batch": f"b{int(item.split('-')[1]) % 2}"},
            }
            for item in ITEMS
        ],
    )
    rows = [
        {
            "participant": rater,
            "item": item,
            "answer": {"ratings": RATINGS[rater][item]},
            "source": "model" if rater == "judge" else "lab",
        }
        for rater in (*HUMANS, "judge")
        for item in ITEMS
    ]
    AnsweredResponseFactory.from_specs(study, rows)
    return study


def _series(rater: str, question: str, items=ITEMS) -> list[int]:
    return [RATINGS[rater][item][question] for item in items]


def _names(study) -> dict[str, str]:
    return {
        p.platform_worker_id: pseudonym(
            study.pseudonym_salt,
            source=p.source,
            platform_worker_id=p.platform_worker_id,
            public_id=p.public_id,
        )
        for p in Participant.objects.filter(platform_worker_id__in=HUMANS)
    }


def test_pooled_grouped_and_per_system_alpha_equal_the_krippendorff_package(module_study, computed):
    rows = computed
    pooled = report_row(rows, "agreement.krippendorff_alpha", questions="all", level="ordinal")
    data = [[RATINGS[h][i][q] for i in ITEMS for q in QUESTIONS] for h in HUMANS]
    assert pooled["value"] == pytest.approx(
        krippendorff.alpha(data, level_of_measurement="ordinal"), abs=1e-9
    )
    assert pooled["details"]["units"] == len(ITEMS) * len(QUESTIONS)
    group = report_row(rows, "agreement.krippendorff_alpha", question_group="consistency", level="ordinal")
    data = [[RATINGS[h][i][q] for i in ITEMS for q in ("edit", "fact")] for h in HUMANS]
    assert group["value"] == pytest.approx(krippendorff.alpha(data, level_of_measurement="ordinal"), abs=1e-9)
    rome = report_row(rows, "agreement.krippendorff_alpha", system="ROME", question="edit", level="ordinal")
    mine = [i for i in ITEMS if i.startswith("ROME")]
    data = [_series(h, "edit", mine) for h in HUMANS]
    assert rome["value"] == pytest.approx(krippendorff.alpha(data, level_of_measurement="ordinal"), abs=1e-9)
    assert rome["n"] == 3 * len(mine)


def test_reliability_figures_equal_the_textbook_formulas(module_study, computed):
    rows = computed
    table = np.array([_series(h, "edit") for h in HUMANS], dtype=float).T  # items × raters
    n, k = table.shape
    grand = table.mean()
    msr = k * ((table.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    msc = n * ((table.mean(axis=0) - grand) ** 2).sum() / (k - 1)
    mse = (((table - grand) ** 2).sum() - msr * (n - 1) - msc * (k - 1)) / ((n - 1) * (k - 1))
    icc = report_row(rows, "agreement.icc2k", question="edit", level="ordinal")
    assert icc["value"] == pytest.approx((msr - mse) / (msr + (msc - mse) / n), abs=1e-9)
    assert icc["details"]["dof"] == [n - 1, (n - 1) * (k - 1)] and 0 <= icc["details"]["p_value"] <= 1

    pairs = [(a[i], b[i]) for a, b in itertools.combinations(table.T, 2) for i in range(n)]
    for points in (1, 2):
        within = report_row(rows, f"agreement.within_{points}", question="edit", level="ordinal")
        expected = np.mean([abs(a - b) <= points for a, b in pairs])
        assert (within["value"], within["n"]) == (pytest.approx(expected), len(pairs))
        assert within["ci_low"] <= within["value"] <= within["ci_high"]

    answers = np.array([[RATINGS[h][i]["edit"], RATINGS[h][i]["fact"]] for h in HUMANS for i in ITEMS], float)
    textbook = 2 * (1 - answers.var(axis=0, ddof=1).sum() / answers.sum(axis=1).var(ddof=1))
    cronbach = report_row(rows, "agreement.cronbach_alpha", question_group="consistency", level="ordinal")
    assert cronbach["value"] == pytest.approx(textbook, abs=1e-9)
    assert cronbach["ci_low"] < cronbach["value"] < cronbach["ci_high"]
    assert cronbach["details"]["ci_method"] == "feldt"


def test_pairwise_kappa_matrix_equals_sklearn_for_each_weighting(module_study, computed):
    rows = computed
    names = _names(module_study)
    for weights in (None, "linear", "quadratic"):
        label = weights or "none"
        kappas = []
        for a, b in itertools.combinations(HUMANS, 2):
            expected = cohen_kappa_score(
                _series(a, "natural"), _series(b, "natural"), labels=SCALE, weights=weights
            )
            kappas.append(expected)
            found = [
                r
                for r in rows
                if r["metric"] == "agreement.cohen_kappa"
                and r["group"].get("question") == "natural"
                and r["group"]["weights"] == label
                and {r["group"]["annotator"], r["group"]["with"]} == {names[a], names[b]}
            ]
            assert len(found) == 1 and found[0]["value"] == pytest.approx(expected, abs=1e-9)
            assert found[0]["n"] == len(ITEMS)
        mean = report_row(
            rows, "agreement.pairwise_kappa", question="natural", level="ordinal", weights=label
        )
        assert mean["value"] == pytest.approx(np.mean(kappas), abs=1e-9)
        assert mean["details"]["annotators"] == 3
        # a bootstrap over the items: each resample's kappas on the drawn items, by the textbook
        # formula below (itself equal to scikit-learn's on every pair: 2,000 resamples of three
        # pairs through scikit-learn's checks cost 18 s of the suite for the same figures)
        for a, b in itertools.combinations(HUMANS, 2):
            ours = _textbook_kappa(_series(a, "natural"), _series(b, "natural"), weights)
            assert ours == pytest.approx(
                cohen_kappa_score(
                    _series(a, "natural"), _series(b, "natural"), labels=SCALE, weights=weights
                ),
                abs=1e-12,
            )
        resampled = [
            np.mean(
                [
                    _textbook_kappa(_series(a, "natural", drawn), _series(b, "natural", drawn), weights)
                    for a, b in itertools.combinations(HUMANS, 2)
                ]
            )
            for drawn in _drawn_items(
                seed_for("agreement.pairwise_kappa", _as_built("natural", weights=label))
            )
        ]
        low, high = np.percentile(resampled, expanded_levels(len(ITEMS)))
        assert (mean["ci_low"], mean["ci_high"]) == (pytest.approx(low), pytest.approx(high))
        assert mean["details"]["ci_method"] == "unit bootstrap"


def expanded_levels(units: int) -> list[float]:
    """The expanded percentile interval's levels for ``units`` draws (Hesterberg 2015)."""
    tail = 100 * stats.norm.cdf(np.sqrt(units / (units - 1)) * stats.t.ppf(0.025, units - 1))
    return [tail, 100 - tail]


def _as_built(question: str, **more) -> dict:
    """A figure's group with its keys in the order the reports build it (the seed reads
    them in order; the stored row's JSON sorts them)."""
    return {"question": question, "level": "ordinal", **more}


def _textbook_kappa(first: list[int], second: list[int], weights: str | None) -> float:
    """Cohen's kappa of two raters over ``SCALE`` as the textbook writes it: one minus the
    weighted observed disagreement over the weighted disagreement expected by chance."""
    index = {value: position for position, value in enumerate(SCALE)}
    observed = np.zeros((len(SCALE), len(SCALE)))
    np.add.at(observed, ([index[v] for v in first], [index[v] for v in second]), 1)
    expected = np.outer(observed.sum(1), observed.sum(0)) / observed.sum()
    distance = np.abs(np.subtract.outer(np.arange(len(SCALE)), np.arange(len(SCALE))))
    disagreement = {None: (distance > 0).astype(float), "linear": distance, "quadratic": distance**2}[weights]
    return 1 - (disagreement * observed).sum() / (disagreement * expected).sum()


def _drawn_items(seed: int) -> list[list[str]]:
    """The items of each resample of a bootstrap over the items (``stats.bootstrap``'s draws:
    ``UNIT_RESAMPLES`` rows of item indices from a generator seeded with the figure's seed)."""
    drawn = np.random.default_rng(seed).integers(0, len(ITEMS), (UNIT_RESAMPLES, len(ITEMS)))
    return [[ITEMS[i] for i in row] for row in drawn]


def test_alpha_has_an_interval_from_a_bootstrap_over_items(module_study, computed):
    """The alpha row carries the interval of a bootstrap over items: each resample's alpha by
    the krippendorff package on the drawn items' ratings, same draws."""
    rows = computed
    alpha = report_row(rows, "agreement.krippendorff_alpha", question="edit", level="ordinal")
    resampled = [
        krippendorff.alpha([_series(h, "edit", drawn) for h in HUMANS], level_of_measurement="ordinal")
        for drawn in _drawn_items(seed_for("agreement.krippendorff_alpha", _as_built("edit")))
    ]
    low, high = np.percentile(resampled, expanded_levels(len(ITEMS)))
    assert (alpha["ci_low"], alpha["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert alpha["ci_low"] < alpha["value"] < alpha["ci_high"]
    assert alpha["details"]["ci_method"] == "unit bootstrap"
    icc = report_row(rows, "agreement.icc2k", question="edit", level="ordinal")
    assert icc["ci_low"] < icc["value"] < icc["ci_high"] and icc["details"]["ci_method"] == "unit bootstrap"


def _majority(values: list[int]) -> int | None:
    counts = {v: values.count(v) for v in values}
    top = max(counts.values())
    winners = [v for v, c in counts.items() if c == top]
    return winners[0] if len(winners) == 1 else None


def test_the_machine_rater_against_humans_and_their_majority_beside_the_human_ceiling(module_study, computed):
    rows = computed
    base = {"question": "fact", "level": "ordinal"}

    def kappa(a, b):
        return cohen_kappa_score(a, b, labels=SCALE, weights="quadratic")

    judge = _series("judge", "fact")
    versus = report_row(rows, "agreement.machine_kappa", **base, rater="judge", against="humans")
    assert versus["value"] == pytest.approx(np.mean([kappa(_series(h, "fact"), judge) for h in HUMANS]))
    assert versus["n"] == 3 and versus["details"]["weights"] == "quadratic"
    assert versus["ci_low"] <= versus["value"] <= versus["ci_high"]
    majority = [_majority([RATINGS[h][i]["fact"] for h in HUMANS]) for i in ITEMS]
    kept = [(j, m) for j, m in zip(judge, majority, strict=True) if m is not None]
    to_majority = report_row(rows, "agreement.machine_kappa", **base, rater="judge", against="majority")
    assert to_majority["value"] == pytest.approx(kappa(*zip(*kept, strict=True)))
    alpha = report_row(rows, "agreement.machine_alpha", **base, rater="judge", against="majority")
    reference = krippendorff.alpha(np.array(kept, dtype=float).T, level_of_measurement="ordinal")
    assert alpha["value"] == pytest.approx(reference, abs=1e-9) and alpha["details"]["pairs"] == len(kept)

    ceiling = report_row(rows, "agreement.machine_kappa", **base, rater="humans", against="humans")
    pairs = [kappa(_series(a, "fact"), _series(b, "fact")) for a, b in itertools.combinations(HUMANS, 2)]
    assert ceiling["value"] == pytest.approx(np.mean(pairs))
    loo = []
    for h in HUMANS:
        others = [_majority([RATINGS[o][i]["fact"] for o in HUMANS if o != h]) for i in ITEMS]
        kept = [(x, m) for x, m in zip(_series(h, "fact"), others, strict=True) if m is not None]
        loo.append(kappa(*zip(*kept, strict=True)))
    ceiling = report_row(rows, "agreement.machine_kappa", **base, rater="humans", against="majority")
    assert ceiling["value"] == pytest.approx(np.mean(loo))
    # the judge never counts among the humans
    human_alpha = report_row(rows, "agreement.krippendorff_alpha", **base)
    assert human_alpha["n"] == 3 * len(ITEMS)


def test_by_any_provenance_key_and_bad_keys_are_refused(module_study):
    rows = computereports_json(module_study, "--by", "batch")
    batch = report_row(rows, "agreement.krippendorff_alpha", batch="b1", question="edit", level="ordinal")
    mine = [i for i in ITEMS if int(i.split("-")[1]) % 2]
    data = [_series(h, "edit", mine) for h in HUMANS]
    assert batch["value"] == pytest.approx(krippendorff.alpha(data, level_of_measurement="ordinal"), abs=1e-9)
    assert not [r for r in rows if "system" in r["group"] and r["metric"].startswith("agreement.")]
    with pytest.raises(CommandError, match="by"):
        call_command("computereports", module_study.slug, "--by", "question", stdout=StringIO())
    with pytest.raises(CommandError, match="by"):
        call_command("computereports", module_study.slug, "--by", "a__b", stdout=StringIO())


def test_csv_has_a_line_per_figure_with_group_and_details_columns(module_study, computed):
    rows = computed
    out = StringIO()
    call_command("computereports", module_study.slug, "--csv", stdout=out)
    lines = list(csv.DictReader(StringIO(out.getvalue())))
    assert len(lines) == len(rows) == Report.objects.filter(study=module_study, population="all").count()
    pooled = [
        line
        for line in lines
        if line["metric"] == "agreement.krippendorff_alpha" and line["group.questions"] == "all"
    ]
    expected = report_row(rows, "agreement.krippendorff_alpha", questions="all", level="ordinal")
    assert float(pooled[0]["value"]) == pytest.approx(expected["value"])
    assert pooled[0]["details.units"] == str(len(ITEMS) * len(QUESTIONS))
    assert {"group.annotator", "details.p_value", "ci_low"} <= set(lines[0])


def test_the_api_serves_the_new_figures_with_their_details(module_study, module_owner, computed):
    rows = computed
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=module_owner).key}")
    response = client.get(
        f"/api/v1/studies/{module_study.slug}/reports/", {"metric": "agreement.icc2k", "population": "all"}
    )
    assert response.status_code == 200
    body = response.json()
    results = body["results"] if isinstance(body, dict) else body
    assert {json.dumps(r["group"], sort_keys=True) for r in results} == {
        json.dumps(r["group"], sort_keys=True) for r in rows if r["metric"] == "agreement.icc2k"
    }
    assert all("p_value" in r["details"] for r in results if r["value"] is not None)


def test_the_dashboard_shows_the_new_tables(module_study, module_owner, client, computed):
    client.force_login(module_owner)
    page = client.get(f"/research/s/{module_study.slug}/dashboard/").content.decode()
    for title in (
        "Agreement over all questions",
        "Agreement per question group",
        "Agreement per system and question",
        "Machine raters against humans",
        "Cohen&#x27;s kappa of each pair of annotators",
    ):
        assert title in page
    assert _names(module_study)["h0"] in page
    assert "judge" in page
