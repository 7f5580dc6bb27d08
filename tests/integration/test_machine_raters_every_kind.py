"""Machine raters (participants with source ``model``) beside the humans in the kinds that had
no such test: ranking, plausibility and the boundary game. On PostgreSQL, through
``computereports --json``, with the answers stored through the services.

For each kind three humans and one judge answer the same items. The ``agreement.machine_*``
rows of each agreement question are checked against a computation by hand (the krippendorff
package for alpha, scikit-learn's Cohen's kappa against each human and against the human
majority, the humans among themselves as the ceiling), and the kind's own figures against a
twin study the judge never answered."""

from __future__ import annotations

import copy
import itertools
import json
from collections import Counter
from dataclasses import dataclass

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from scoring.reports.common import HUMAN_METRICS
from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory
from tests.helpers.reports import computereports_json, report_row

pytestmark = pytest.mark.django_db

HUMANS = ("h1", "h2", "h3")
JUDGE = "judge"
RATERS = (*HUMANS, JUDGE)
ITEMS = [f"i{n}" for n in range(10)]
# How often a rater gives the item's "true" answer rather than a random one.
FAITHFUL = {"h1": 0.8, "h2": 0.75, "h3": 0.7, JUDGE: 0.5}

# question → rater → unit → value: the agreement values of one scope, written by hand.
Values = dict[str, dict[str, dict[object, object]]]


@dataclass(frozen=True)
class Case:
    """One kind's study: its items, each rater's answers, and the values that agreement
    compares per (question, level), derived here from the answers without the kind's code."""

    kind: str
    items: list[dict]
    answers: dict[str, dict[str, dict]]
    values: dict[tuple[str, str], dict[str, dict[object, object]]]


def _faithful(rng: np.random.Generator, rater: str) -> bool:
    return bool(rng.random() < FAITHFUL[rater])


SYSTEMS = ("ROME", "FT", "GPT")
CRITERIA = ("consistency", "fluency")


def ranking_case() -> Case:
    rng = np.random.default_rng(31)
    passages = [{"system": s, "text": f"{s} text."} for s in SYSTEMS]
    items = [{"external_id": item, "payload": {"fact": "X is in Y.", "passages": passages}} for item in ITEMS]
    answers: dict[str, dict[str, dict]] = {rater: {} for rater in RATERS}
    values: dict[tuple[str, str], dict[str, dict[object, object]]] = {}

    def value(question: str, level: str, rater: str, unit: str, given: object) -> None:
        values.setdefault((question, level), {}).setdefault(rater, {})[unit] = given

    for item in ITEMS:
        truth = {criterion: list(rng.permutation(SYSTEMS)) for criterion in CRITERIA}
        for rater in RATERS:
            choices = {}
            for criterion in CRITERIA:
                order = truth[criterion] if _faithful(rng, rater) else list(rng.permutation(SYSTEMS))
                most, least = str(order[0]), str(order[-1])
                choices[criterion] = {"most": most, "least": least}
                for end, system in (("most", most), ("least", least)):
                    value(f"{criterion}.{end}", "nominal", rater, item, system)
                for system in SYSTEMS:
                    score = 1 if system == most else -1 if system == least else 0
                    value(criterion, "ordinal", rater, f"{item}#{system}", score)
            answers[rater][item] = {"shown": list(SYSTEMS), "choices": choices}
    return Case("ranking", items, answers, values)


EXPLANATIONS = ("e1", "e2", "e3")
PLAUSIBLE = {0: "no", 1: "moderate", 2: "yes"}


def plausibility_case() -> Case:
    rng = np.random.default_rng(32)
    payload = {
        "question": "Why?",
        "answer": "Because.",
        "explanations": [{"id": e, "text": f"Explanation {e}."} for e in EXPLANATIONS],
    }
    items = [{"external_id": item, "payload": payload} for item in ITEMS]
    answers: dict[str, dict[str, dict]] = {rater: {} for rater in RATERS}
    values: dict[str, dict[object, object]] = {rater: {} for rater in RATERS}
    for item in ITEMS:
        truth = {e: int(rng.integers(0, 3)) for e in EXPLANATIONS}
        for rater in RATERS:
            ratings = {}
            for e in EXPLANATIONS:
                value = truth[e] if _faithful(rng, rater) else int(rng.integers(0, 3))
                ratings[e] = PLAUSIBLE[value]
                values[rater][f"{item}#{e}"] = value
            answers[rater][item] = {"ratings": ratings}
    return Case("plausibility", items, answers, {("plausibility", "ordinal"): values})


SENTENCES = 10


def boundary_case() -> Case:
    rng = np.random.default_rng(33)
    boundaries = {item: int(rng.integers(2, SENTENCES)) for item in ITEMS}
    items = [
        {
            "external_id": item,
            "payload": {
                "sentences": [f"S{i}." for i in range(SENTENCES)],
                "boundary": boundary,
                "category": "news",
                "model": "gpt2-xl",
                "p": 0.4,
            },
            "provenance": {"system": "gpt2-xl"},
        }
        for item, boundary in boundaries.items()
    ]
    answers: dict[str, dict[str, dict]] = {rater: {} for rater in RATERS}
    values: dict[str, dict[object, object]] = {rater: {} for rater in RATERS}
    for item, boundary in boundaries.items():
        for rater in RATERS:
            spread = 1 if _faithful(rng, rater) else 3
            guess = int(np.clip(boundary + rng.integers(-spread, spread + 1), 1, SENTENCES))
            answers[rater][item] = {"guess": guess, "reason": "The topic drifts."}
            values[rater][item] = guess
    return Case("boundary", items, answers, {("guess", "interval"): values})


CASES = {"ranking": ranking_case, "plausibility": plausibility_case, "boundary": boundary_case}


def _study(case: Case, slug: str, raters=RATERS):
    study = StudyFactory(kind=case.kind, slug=slug, annotations_per_item=len(HUMANS))
    ItemFactory.from_specs(study, case.items)
    rows = [
        {
            "participant": rater,
            "item": item,
            "answer": case.answers[rater][item],
            "source": "model" if rater == JUDGE else "lab",
        }
        for item in ITEMS
        for rater in raters
    ]
    AnsweredResponseFactory.from_specs(study, rows)
    return study


# --- the reference, by hand ---------------------------------------------------------------


def _majority(values: list) -> object | None:
    """The value most of ``values`` have; None on a tie or with none."""
    counts = Counter(values).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


@dataclass(frozen=True)
class Reference:
    """Alpha and kappa of one scope's values, as a researcher would compute them."""

    level: str
    values: dict[str, dict[object, object]]

    @property
    def labels(self) -> list:
        domain = sorted({v for rater in self.values.values() for v in rater.values()})
        if self.level == "nominal":
            return domain
        return list(range(int(min(domain)), int(max(domain)) + 1))  # weights count points

    @property
    def weights(self) -> str | None:
        return None if self.level == "nominal" else "quadratic"

    def code(self, value) -> float:
        return float(self.labels.index(value)) if self.level == "nominal" else float(value)

    def alpha(self, pairs: list[tuple]) -> float:
        """Each pair a unit of two values."""
        data = np.array([[self.code(a) for a, _ in pairs], [self.code(b) for _, b in pairs]])
        return krippendorff.alpha(reliability_data=data, level_of_measurement=self.level)

    def kappa(self, pairs: list[tuple]) -> float:
        first, second = zip(*pairs, strict=True)
        return cohen_kappa_score(first, second, labels=self.labels, weights=self.weights)

    def shared(self, a: str, b: str) -> list[tuple]:
        units = sorted(set(self.values[a]) & set(self.values[b]), key=str)
        return [(self.values[a][u], self.values[b][u]) for u in units]

    def to_majority(self, rater: str, others: tuple[str, ...]) -> list[tuple]:
        pairs = []
        for unit, value in sorted(self.values[rater].items(), key=lambda kv: str(kv[0])):
            majority = _majority([self.values[o][unit] for o in others if unit in self.values[o]])
            if majority is not None:
                pairs.append((value, majority))
        return pairs

    def expected(self) -> dict[tuple[str, str], tuple[float, float, int, int]]:
        """(rater, against) → (alpha, mean kappa, pairs of values compared, kappas averaged)."""
        human_pairs = [self.shared(a, b) for a, b in itertools.combinations(HUMANS, 2)]
        loo = [self.to_majority(h, tuple(o for o in HUMANS if o != h)) for h in HUMANS]
        judge_pairs = [self.shared(h, JUDGE) for h in HUMANS]
        judge_majority = self.to_majority(JUDGE, HUMANS)
        found = {}
        for key, groups in (
            (("humans", "humans"), human_pairs),
            (("humans", "majority"), loo),
            ((JUDGE, "humans"), judge_pairs),
            ((JUDGE, "majority"), [judge_majority]),
        ):
            pooled = [pair for group in groups for pair in group]
            kappas = [self.kappa(group) for group in groups if len(group) >= 2]
            kappas = [k for k in kappas if not np.isnan(k)]
            found[key] = (self.alpha(pooled), float(np.mean(kappas)), len(pooled), len(kappas))
        return found


def _pooled(case: Case, level: str) -> dict[str, dict[object, object]]:
    """Every question of a level in one scope: each (question, unit) is a unit."""
    pooled: dict[str, dict[object, object]] = {rater: {} for rater in RATERS}
    for (question, at), by_rater in case.values.items():
        if at == level:
            for rater, values in by_rater.items():
                pooled[rater].update({(question, unit): value for unit, value in values.items()})
    return pooled


def _scopes(case: Case) -> list[tuple[dict, Reference]]:
    scopes = [
        ({"question": question, "level": level}, Reference(level, values))
        for (question, level), values in case.values.items()
    ]
    for level in sorted({level for _, level in case.values}):
        if sum(1 for _, at in case.values if at == level) > 1:
            scopes.append(({"questions": "all", "level": level}, Reference(level, _pooled(case, level))))
    return scopes


def _rounded(value):
    """Floats to 12 significant digits: NumPy's sums may differ in the last bit with the
    alignment of an array in memory, not with the data."""
    if isinstance(value, dict):
        return {key: _rounded(v) for key, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, float):
        return float(f"{value:.12g}")
    return value


# --- the tests ----------------------------------------------------------------------------

# kind → the report rows of its judged study: both tests of a kind read the same rows, so the
# first to run (in this process) builds the study and computes them, the other reads them.
_JUDGED_ROWS: dict[str, list[dict]] = {}


def judged_rows(kind: str) -> list[dict]:
    """``computereports --json`` on the kind's study answered by the humans and the judge;
    a copy, so neither test sees what the other did to its rows."""
    if kind not in _JUDGED_ROWS:
        _JUDGED_ROWS[kind] = computereports_json(_study(CASES[kind](), f"judged-{kind}"))
    return copy.deepcopy(_JUDGED_ROWS[kind])


@pytest.mark.parametrize("kind", sorted(CASES))
def test_the_judge_against_humans_and_their_majority_equals_a_computation_by_hand(kind):
    case = CASES[kind]()
    rows = judged_rows(kind)
    scopes = _scopes(case)
    assert scopes, kind
    for group, reference in scopes:
        for (rater, against), (alpha, kappa, pairs, kappas) in reference.expected().items():
            keys = {**group, "rater": rater, "against": against}
            found_alpha = report_row(rows, "agreement.machine_alpha", **keys)
            assert found_alpha["value"] == pytest.approx(alpha, abs=1e-9), keys
            assert found_alpha["details"]["pairs"] == pairs, keys
            found_kappa = report_row(rows, "agreement.machine_kappa", **keys)
            assert found_kappa["value"] == pytest.approx(kappa, abs=1e-9), keys
            assert found_kappa["n"] == kappas, keys
            assert found_kappa["details"]["weights"] == (reference.weights or "none")
        raters = {r["group"]["rater"] for r in rows if r["metric"] == "agreement.machine_alpha"}
        assert raters == {"humans", JUDGE}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_the_kinds_own_figures_and_human_agreement_do_not_move_with_the_judge(kind):
    judged = judged_rows(kind)
    humans_only = computereports_json(_study(CASES[kind](), f"humans-{kind}", raters=HUMANS))

    def figures(rows: list[dict]) -> dict[str, dict]:
        kept = [r for r in rows if r["metric"].startswith(f"{kind}.") or r["metric"] in HUMAN_METRICS]
        return {json.dumps([r["metric"], r["group"]], sort_keys=True): _rounded(r) for r in kept}

    mine, reference = figures(judged), figures(humans_only)
    assert any(key.startswith(f'["{kind}.') for key in reference), kind
    assert set(mine) == set(reference)
    for key, expected in reference.items():
        assert mine[key] == expected, key
    assert not [r for r in humans_only if r["metric"].startswith("agreement.machine_")]
