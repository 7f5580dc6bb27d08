"""A researcher's own questions: per question, the figures that fit its type.

- ``scale``: mean with a cluster-robust CI (items, or sources, and participants), pooled and
  per system; per pair of systems on paired cases (items sharing ``provenance.source_id``)
  the difference with its CI and a two-sided Wilcoxon signed-rank test (systems never on
  the same case: on their items, with a Mann-Whitney test), Holm-adjusted over the
  question's pairs (``stats.likert``, as for the likert kind);
- ``choice`` and ``multi``: the share of each option, pooled and per system; a test that
  the answer does not depend on the system (a multi: per option, chosen or not), the
  cluster-robust Wald test by item (``stats.clustered.independence_test``);
- ``pick``: per system, how often its passage was picked (best, pairwise) or the MOST /
  LEAST counts and best-worst score (best_worst); the wins those picks imply with a test of
  each pair's win rate clustered by item and participant (``stats.ranking.win_tests``) and
  Bradley-Terry strengths with intervals, rank intervals and the position bias (the
  passages' recorded display order), as the ranking kind computes them; the share of ties;
- ``sentences``: F1 between the sentence sets two annotators of an item marked, pooled
  and per system of the passage.

Every mean and share has a cluster-robust interval by unit (the item, or its case where
items share ``provenance.source_id``) and participant (``stats.clustered``), clipped to the
figure's possible range.

A question asked per passage (``per: "passage"``) is one observation per (item, passage) with
that passage's system: its means, shares, system comparisons (paired within the page, or the
item's case) and agreement (units ``<item>#<passage id>``) are those of its type.

Agreement (alpha ordinal and interval for scales, nominal for the rest) comes from the
kind's ``agreement_values`` through the common tables; a multi question's alpha on whole
sets with the MASI distance (``stats.sets``) is computed here. A scale, choice or multi question's
system is the system of the item's one passage, else the item's ``provenance.system``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stats import bradley_terry as bt
from stats import claim, likert
from stats import ranking as bws
from stats.clustered import case_codes, clustered_group_means, clustered_mean, design_units, independence_test
from stats.estimate import Estimate
from stats.sets import masi_alpha

from .base import (
    Comparisons,
    Field,
    KindReport,
    PlotSpec,
    ReportRow,
    StudyData,
    TableSpec,
    mean_row,
    row,
)
from .scale import MEAN_NOTE, comparison_rows, pair_table
from .spans import TABLES as SPAN_TABLES
from .spans import span_rows
from .strengths import WIN_NOTE, position_table, strength_rows, strength_table, win_figures

TIE = "tie"  # as the kind stores a pairwise tie
PER_PASSAGE = "passage"  # a question asked under each passage (``per``), answered {passage id: value}
MAX_PASSAGES = 26  # as the kind allows (the letters A..Z)


class QuestionnaireReport(KindReport):
    # ``order``: the passages' ids in the order the page showed them (the assignment's state).
    response_fields = {"answer": Field("answer", "json"), "order": Field("display_order__order", "json")}
    # Each passage's id and system by position (text columns the item cache keeps; the
    # passages' texts are never read).
    item_fields = {
        **{
            f"passage{n}{key}": Field(f"payload__passages__{n}__{key}", "text")
            for n in range(MAX_PASSAGES)
            for key in ("id", "system")
        },
        # the passages' lengths in characters (the spans questions' agreement reads them)
        **{
            f"passage{n}length": Field(f"payload__passages__{n}__text", "length") for n in range(MAX_PASSAGES)
        },
        "provenance_system": Field("provenance__system", "text"),
        "source": Field("provenance__source_id", "text"),
    }
    tables = (
        # Pooled first: a page-level question on several passages has no one system (the
        # pairwise and best-worst examples' scale and choice), and its figures are these.
        TableSpec(
            "Scale questions: mean over all answers (± sd, 95% CI)",
            ("questionnaire.mean",),
            ("question",),
            details=("sd",),
            note=MEAN_NOTE,
        ),
        TableSpec(
            "Choice and multi questions: share of each option over all answers (95% CI)",
            ("questionnaire.share",),
            ("question", "option"),
        ),
        TableSpec(
            "Scale questions: mean per system (± sd, 95% CI)",
            ("questionnaire.mean",),
            ("question", "system"),
            details=("sd",),
            note=MEAN_NOTE,
        ),
        pair_table("questionnaire.difference", "cases"),
        TableSpec(
            "Choice and multi questions: share of each option per system (95% CI)",
            ("questionnaire.share",),
            ("question", "system", "option"),
        ),
        TableSpec(
            "Does the answer depend on the system? (cluster-robust Wald test)",
            ("questionnaire.chi_square",),
            ("question", "option"),
            details=("statistic", "dof", "p_holm"),
            value_label="p",
            note="Equal option shares for every system, tested with the answers clustered by item "
            "(Hotelling's F; with 100 items or fewer, a permutation p), not as independent. "
            "A multi question: a test per option, "
            "Holm-adjusted over the question's options.",
        ),
        TableSpec(
            "Pick questions: picked, MOST / LEAST and best-worst score per system",
            (
                "questionnaire.picked",
                "questionnaire.most",
                "questionnaire.least",
                "questionnaire.bws",
            ),
            ("question", "system"),
        ),
        strength_table(
            "questionnaire", "question", "Pick questions: Bradley-Terry strengths and ranks per system"
        ),
        position_table("questionnaire", "question"),
        TableSpec(
            "Pick questions: wins per pair of systems (two-sided tests)",
            ("questionnaire.wins",),
            ("question", "system", "over"),
            details=("losses", "win_rate", "p_value", "p_holm"),
            note=WIN_NOTE.format(family="question"),
            pair=("system", "over"),
            pair_prefer="win_rate",
        ),
        TableSpec(
            "Multi questions: agreement on the set chosen (Krippendorff's alpha, MASI distance)",
            ("questionnaire.masi_alpha",),
            ("question",),
            note="MASI counts two sets as closer when one holds the other than when they only overlap; "
            "the per-option alphas are in the agreement table.",
        ),
        TableSpec("Pick questions: share of ties", ("questionnaire.tie_share",), ("question",)),
        TableSpec(
            "Sentences questions: F1 between two annotators of an item",
            ("questionnaire.sentence_f1",),
            ("question", "system"),
        ),
        *SPAN_TABLES,
    )
    plots = (
        PlotSpec(
            "questionnaire-means",
            "Scale questions: mean per system (95% CI)",
            "questionnaire.mean",
            "question",
            hue="system",
            ylabel="mean",
        ),
    )

    def comparisons(self, data: StudyData) -> list[Comparisons]:
        return pick_comparisons(data)

    def rows(self, data: StudyData, *, embed=None) -> list[ReportRow]:
        answers = data.responses["answer"]
        item = data.responses["item"]
        passages = _passages(data)
        page_systems = [
            _page_system(p, s) for p, s in zip(passages, data.items["provenance_system"], strict=True)
        ]
        systems = np.array(page_systems, dtype=object)[item]
        design = _Design(data)
        rows: list[ReportRow] = []
        for question in data.config["questions"]:
            values = [(a or {}).get(question["id"]) for a in answers]
            if question.get("per") == PER_PASSAGE:
                rows += _per_passage_rows(question, values, item, passages, design)
                continue
            if question["type"] == "spans":
                lengths = data.items[f"passage{question['passage'] - 1}length"]
                rows += span_rows(question, values, item, passages, systems, design, lengths)
            builder = _BUILDERS.get(question["type"])
            if builder is not None:
                rows += builder(question, values, item, passages, systems, design)
        return rows

    def question_order(self, config: dict) -> list[str]:
        return [q["id"] for q in config["questions"]]

    def observation_systems(self, data: StudyData) -> np.ndarray | None:
        """A per-passage question's observations are about their passage's system (the
        agreement per system groups them by it); the others keep the item's."""
        per = [q["id"] for q in data.config["questions"] if q.get("per") == PER_PASSAGE]
        questions = np.asarray(data.observations["question"]).astype(str)
        mine = np.flatnonzero(np.isin(questions, per))
        if not mine.size:
            return None
        systems = np.full(len(questions), None, dtype=object)
        systems[mine] = self.observation_design(data, mine)[0]
        return systems

    def priority_keys(self, data: StudyData) -> np.ndarray:
        """A per-passage question's answers are judged per passage (``<id>#<passage id>``):
        an item whose two passages are each rated alike is settled, though they differ."""
        observations = data.observations
        questions = np.asarray(observations["question"]).astype(str)
        per = sorted(q["id"] for q in data.config["questions"] if q.get("per") == PER_PASSAGE)
        mine = np.flatnonzero(np.isin(questions, per))
        if mine.size:
            units = np.asarray(observations["unit"]).astype(str)
            questions = questions.astype(object)
            for k in mine:
                questions[k] = f"{questions[k]}#{units[k].rpartition('#')[2]}"
            questions = questions.astype(str)
        return questions

    def observation_design(self, data: StudyData, rows: np.ndarray) -> tuple[np.ndarray, ...]:
        """A per-passage question's observation (unit ``<item>#<passage id>``) is about its
        passage's system, compared within its page (the item's case where it has one) and
        counted as a unit of its own; any other question's is about the page's system
        (``_page_system``, as the reports read it), paired by ``provenance.source_id``."""
        observations = data.observations
        item = data.responses["item"][observations["response"][rows]]
        units = np.asarray(observations["unit"][rows]).astype(str)
        questions = np.asarray(observations["question"][rows]).astype(str)
        per = {q["id"] for q in data.config["questions"] if q.get("per") == PER_PASSAGE}
        passages = _passages(data)
        sources = data.items["source"]
        page = [_page_system(p, s) for p, s in zip(passages, data.items["provenance_system"], strict=True)]
        system = np.empty(len(rows), dtype=object)
        case = np.empty(len(rows), dtype=object)
        unit = np.empty(len(rows), dtype=object)
        for k, (at, name, question) in enumerate(zip(item, units, questions, strict=True)):
            if question in per:
                pid = name.rpartition("#")[2]
                system[k] = next((p["system"] for p in passages[at] if p["id"] == pid), "")
                case[k] = str(sources[at]) or f"\x00{at}"  # the page, where the item has no case
                unit[k] = name
            else:
                system[k], case[k], unit[k] = page[at], str(sources[at]), str(at)
        return system, case, unit


def _passages(data: StudyData) -> list[list[dict]]:
    """Per item, its passages' ``{id, system}`` in the file's order."""
    columns = [(data.items[f"passage{n}id"], data.items[f"passage{n}system"]) for n in range(MAX_PASSAGES)]
    return [
        [{"id": ids[i], "system": systems[i]} for ids, systems in columns if ids[i]]
        for i in range(len(data.items))
    ]


def _page_system(passages: Any, provenance_system: str) -> str:
    """What a page-level question (scale, choice, multi) is about: the system of the item's
    one passage; with several passages, the item's ``provenance.system`` ("" if none)."""
    if isinstance(passages, list) and len(passages) == 1:
        return passages[0].get("system", "")
    return provenance_system


def _by_system(systems: np.ndarray) -> list[tuple[dict, np.ndarray]]:
    """Groups of responses: all of them, then one per (non-blank) system."""
    named = sorted({s for s in systems if s})
    return [({}, np.ones(len(systems), dtype=bool))] + [({"system": s}, systems == s) for s in named]


class _Design:
    """Per response, what its answers cluster in: its unit (the item's case where the item
    has ``provenance.source_id``, else the item) and its participant; and the recorded
    passage order."""

    def __init__(self, data: StudyData):
        cases = case_codes(data.items["source"])
        self.item = data.responses["item"]
        self.sources = cases[self.item]
        self.units = design_units(cases, np.arange(len(cases)))[self.item]
        self.participants = data.responses["participant"]
        self.orders = data.responses["order"]


class _PassageRows:
    """The design of a per-passage question's answers, one row per (response, passage):
    each row's unit and participant are its response's, and the passages of one item are
    a case (``sources``: the item's case where it has one, else the item), so systems rated
    on the same page are compared within it (paired)."""

    def __init__(self, design: _Design, responses: np.ndarray):
        self.item = design.item[responses]
        self.units = design.units[responses]
        self.sources = self.units
        self.participants = design.participants[responses]
        self.orders = [design.orders[r] for r in responses]


def _per_passage_rows(question, values, item, passages, design) -> list[ReportRow]:
    """A question asked per passage: one observation per (response, passage), with that
    passage's system; then the figures of its type (a scale's means and system comparisons,
    a choice's shares and test), as if each passage were answered on a page of its own."""
    responses, answered = [], []
    systems = []
    for r, value in enumerate(values):
        if not isinstance(value, dict):
            continue
        system_of = {p["id"]: p.get("system", "") for p in passages[item[r]]}
        for pid, given in value.items():
            responses.append(r)
            answered.append(given)
            systems.append(system_of.get(pid, ""))
    at = np.array(responses, dtype=np.int64)
    rows_design = _PassageRows(design, at)
    builder = _scale_rows if question["type"] == "scale" else _option_rows
    return builder(question, answered, item[at], passages, np.array(systems, dtype=object), rows_design)


SHARE = (0.0, 1.0)


def _means(
    metric: str, group: dict, values: np.ndarray, units, participants, bounds=SHARE
) -> list[ReportRow]:
    mean = clustered_mean(values, units, participants, bounds=bounds)
    return [mean_row(metric, group, mean)] if mean is not None else []


# --- scale -----------------------------------------------------------------------------------


def _scale_rows(question, values, item, passages, systems, design) -> list[ReportRow]:
    """Means pooled and per system, clustered by item (or source) and participant, and the
    paired comparisons of systems."""
    qid = question["id"]
    x = np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
    sources, units, participants = design.sources, design.units, design.participants
    rows = []
    for mean in clustered_group_means(x, np.zeros(len(x), dtype=np.int8), units, participants):
        rows.append(mean_row("questionnaire.mean", {"question": qid}, mean))
    named = systems != ""
    for mean in clustered_group_means(x[named], systems[named], units[named], participants[named]):
        rows.append(mean_row("questionnaire.mean", {"question": qid, "system": mean.key[0]}, mean))
    comparisons = likert.system_comparisons(x, systems, sources, participants, units)
    return rows + comparison_rows("questionnaire", {"question": qid}, comparisons)


# --- choice and multi -------------------------------------------------------------------------


def _option_rows(question, values, item, passages, systems, design) -> list[ReportRow]:
    """Share of each option among the answers (a multi: of answers choosing it among the
    answers to the question), and the test of system × answer clustered by unit (a multi:
    one per option, Holm-adjusted over the question's options, a family of tests on one
    page)."""
    qid, multi = question["id"], question["type"] == "multi"
    answered = np.array([v is not None for v in values], dtype=bool)
    rows = []
    option_tests = []
    for option in question["options"]:
        hit = np.array(
            [np.nan if v is None else float(option in v if multi else v == option) for v in values],
            dtype=np.float64,
        )
        for group, mask in _by_system(systems):
            rows += _means(
                "questionnaire.share",
                {"question": qid, **group, "option": option},
                hit[mask],
                design.units[mask],
                design.participants[mask],
            )
        if multi:
            known = answered & (systems != "")
            chosen = np.where(hit[known] == 1, "yes", "no")
            option_tests.append((option, independence_test(chosen, systems[known], design.units[known])))
    rows += _holm_rows(qid, option_tests)
    if multi:
        chosen_sets = [set(v) for v in values if v is not None]
        alpha = masi_alpha(item[answered].tolist(), chosen_sets)
        rows.append(row("questionnaire.masi_alpha", {"question": qid}, alpha))
    else:
        known = answered & (systems != "")
        given = np.array([str(v) for v, k in zip(values, known, strict=True) if k], dtype=object)
        test = independence_test(given, systems[known], design.units[known])
        rows.append(row("questionnaire.chi_square", {"question": qid}, test))
    return rows


def _holm_rows(qid: str, option_tests: list[tuple[str, Estimate]]) -> list[ReportRow]:
    """A multi question's test rows, each with ``p_holm``: Holm over the options whose
    test is defined."""
    adjusted = bws.holm_defined([test for _, test in option_tests])
    return [
        row("questionnaire.chi_square", {"question": qid, "option": option}, test, p_holm=p)
        for (option, test), p in zip(option_tests, adjusted, strict=True)
    ]


# --- pick ------------------------------------------------------------------------------------


def pick_comparisons(data: StudyData) -> list[Comparisons]:
    """Per pick question, the systems of the passages each answer saw and the one it picked
    (best-worst: MOST and LEAST); a pick's observations are ``<id>`` or ``<id>.most`` /
    ``<id>.least``."""
    answers, item = data.responses["answer"], data.responses["item"]
    passages = _passages(data)
    names = sorted({p.get("system", "") for ps in passages for p in ps} - {""})
    code = {name: n for n, name in enumerate(names)}
    out = []
    for question in data.config["questions"]:
        if question["type"] != "pick":
            continue
        qid = question["id"]
        values = [(a or {}).get(qid) for a in answers]
        shown, best, worst, _, _ = _pick_codes(
            question, values, item, passages, code, data.responses["order"]
        )
        least = worst if question["pick"] == "best_worst" else None
        out.append(Comparisons((qid, f"{qid}.most", f"{qid}.least"), names, shown, best, least))
    return out


def _pick_rows(question, values, item, passages, systems, design) -> list[ReportRow]:
    qid = question["id"]
    names = sorted({p.get("system", "") for ps in passages for p in ps} - {""})
    code = {name: n for n, name in enumerate(names)}
    shown, most, least, ties, answered = _pick_codes(question, values, item, passages, code, design.orders)
    rows: list[ReportRow] = []
    # the comparisons keep their response (as their cluster), to look up unit and participant
    responses = np.arange(len(values))
    if question["pick"] == "best_worst":
        flat = bws.appearances(shown, most, least)
        rows += _best_worst_rows(qid, names, flat, design)
        by_response = bt.from_best_worst(shown, most, least, responses)
    else:
        rows += _picked_rows(qid, names, shown, most, answered, design)
        if question["pick"] == "pairwise" and question.get("tie") and answered.any():
            rows += _means(
                "questionnaire.tie_share",
                {"question": qid},
                ties[answered].astype(np.float64),
                design.units[answered],
                design.participants[answered],
            )
        by_response = bt.from_picks(shown, most, ties & answered, responses)
    rows += _win_rows(qid, names, by_response, design)
    # the strengths cluster by item, and by participant where participants cross items
    compared = bt.Comparisons(
        by_response.first,
        by_response.second,
        by_response.outcome,
        item[by_response.cluster],
        design.participants[by_response.cluster],
    )
    return rows + strength_rows("questionnaire", {"question": qid}, names, compared)


def _pick_codes(question, values, item, passages, code, orders):
    """Per response: the systems of the item's passages in the order the page showed them
    (codes, -1 padding; the file's order where none was recorded), the code of the pick
    (best, pairwise, or MOST) and of LEAST (-1 when none), ties, and answered."""
    width = max((len(ps) for ps in passages), default=0)
    shown = np.full((len(values), width), -1, dtype=np.int64)
    most = np.full(len(values), -1, dtype=np.int64)
    least = np.full(len(values), -1, dtype=np.int64)
    ties = np.zeros(len(values), dtype=bool)
    answered = np.zeros(len(values), dtype=bool)
    for r, value in enumerate(values):
        if value is None:
            continue
        answered[r] = True
        by_id = {
            p["id"]: code.get(p.get("system", ""), -1)
            for p in _in_display_order(passages[item[r]], orders[r])
        }
        shown[r, : len(by_id)] = list(by_id.values())
        if isinstance(value, dict):
            most[r], least[r] = by_id.get(value["most"], -1), by_id.get(value["least"], -1)
        elif value == TIE:
            ties[r] = True
        else:
            most[r] = by_id.get(value, -1)
    return shown, most, least, ties, answered


def _in_display_order(passages: list[dict], order) -> list[dict]:
    """The passages in the recorded display order (as ``annotation.kinds.questionnaire.
    passage_order`` reads it), the file's order when none or another set was recorded."""
    ids = [p["id"] for p in passages]
    if not order or sorted(order) != sorted(ids):
        return passages
    by_id = {p["id"]: p for p in passages}
    return [by_id[pid] for pid in order]


def _picked_rows(qid: str, names: list[str], shown, picked, answered, design: _Design) -> list[ReportRow]:
    """Per system: the share of the answers showing its passage that picked it."""
    rows = []
    for n, name in enumerate(names):
        present = answered & (shown == n).any(axis=1)
        if not present.any():
            continue
        hit = (picked[present] == n).astype(np.float64)
        rows += _means(
            "questionnaire.picked",
            {"question": qid, "system": name},
            hit,
            design.units[present],
            design.participants[present],
        )
    return rows


def _best_worst_rows(qid: str, names: list[str], flat: bws.Appearances, design: _Design) -> list[ReportRow]:
    counts = bws.choice_counts(flat, len(names))
    rows = []
    for n, name in enumerate(names):
        total = int(counts["shown"][n])
        if total == 0:
            continue
        group = {"question": qid, "system": name}
        for end in ("most", "least"):
            count = int(counts[end][n])
            rows.append(
                row(f"questionnaire.{end}", group, Estimate(float(count), n=total), share=count / total)
            )
        mine = flat.response[flat.system == n]
        scores = flat.score[flat.system == n]
        units, participants = design.units[mine], design.participants[mine]
        rows += _means("questionnaire.bws", group, scores, units, participants, bounds=(-1.0, 1.0))
    return rows


def _win_rows(qid: str, names: list[str], by_response: bt.Comparisons, design: _Design) -> list[ReportRow]:
    """Wins per pair of systems with the two-sided test of a win rate of one half, clustered
    by unit and participant, Holm over the question's pairs (``stats.ranking.win_tests``)."""
    found = bws.win_tests(
        by_response.first,
        by_response.second,
        by_response.outcome,
        design.units[by_response.cluster],
        design.participants[by_response.cluster],
        n_systems=len(names),
    )
    return [
        row(
            "questionnaire.wins", {"question": qid, "system": names[i], "over": names[j]}, estimate, **details
        )
        for i, j, estimate, details in win_figures(found)
    ]


# --- sentences -------------------------------------------------------------------------------


def _sentence_rows(question, values, item, passages, systems, design) -> list[ReportRow]:
    """F1 between the sets two annotators of an item marked (answers that marked some)."""
    qid = question["id"]
    position = question["passage"] - 1
    marked = np.array([bool(v) for v in values], dtype=bool)
    of_item = [ps[position]["system"] if len(ps) > position else "" for ps in passages]
    passage_systems = np.array(of_item, dtype=object)[item]
    rows = []
    for group, mask in _by_system(passage_systems):
        index = np.flatnonzero(mask & marked)
        scores, owners = claim.evidence_pair_f1(item[index], [values[i] for i in index])
        # a pair of annotators clusters by its item (its two participants are not one)
        units = owners.astype(np.int64)
        rows += _means("questionnaire.sentence_f1", {"question": qid, **group}, scores, units, None)
    return rows


_BUILDERS = {
    "scale": _scale_rows,
    "choice": _option_rows,
    "multi": _option_rows,
    "pick": _pick_rows,
    "sentences": _sentence_rows,
}
