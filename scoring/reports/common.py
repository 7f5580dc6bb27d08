"""Figures every study gets, whatever its kind: progress and inter-annotator agreement."""

from __future__ import annotations

import numpy as np

from stats.counting import count_distinct
from stats.estimate import Estimate
from stats.raters import DEFAULT_CALIBRATION_MARGIN, NOT_CALIBRATED

from .agreement import Ratings, agreement_scope_rows
from .base import Embed, KindReport, PlotSpec, ReportRow, StudyData, TableSpec, row
from .competence import competence_rows
from .hybrid import hybrid_rows

HUMAN_METRICS = (
    "agreement.krippendorff_alpha",
    "agreement.percent",
    "agreement.within_1",
    "agreement.within_2",
    "agreement.fleiss_kappa",
    "agreement.icc2k",
)
AGREEMENT_TABLE = TableSpec(
    title="Agreement between annotators, per question",
    metrics=HUMAN_METRICS,
    keys=("question", "level"),
    details=("units",),
    note="percent = exact agreement; within 1 / 2 = pairs at most 1 / 2 points apart; "
    "icc2k = ICC(2,k) over the units every annotator rated.",
)
POOLED_TABLE = TableSpec(
    title="Agreement over all questions (each question of a unit is a unit)",
    metrics=(*HUMAN_METRICS, "agreement.cronbach_alpha"),
    keys=("questions", "level"),
)
QUESTION_GROUP_TABLE = TableSpec(
    title="Agreement per question group",
    metrics=(*HUMAN_METRICS, "agreement.cronbach_alpha"),
    keys=("question_group", "level"),
)
SYSTEM_TABLE = TableSpec(
    title="Agreement per system and question",
    metrics=HUMAN_METRICS,
    keys=("system", "question", "level"),
)
PAIRWISE_TABLE = TableSpec(
    title="Mean Cohen's kappa over pairs of annotators",
    metrics=("agreement.pairwise_kappa",),
    keys=("question", "level", "weights"),
    details=("annotators", "pairs_undefined"),
)
KAPPA_MATRIX_TABLE = TableSpec(
    title="Cohen's kappa of each pair of annotators, all questions pooled",
    metrics=("agreement.cohen_kappa",),
    keys=("questions", "level", "weights", "annotator", "with"),
    note="Annotators by their pseudonym in the study's exports; n = units both rated. "
    "The matrix per question is in the API and computereports --json / --csv.",
)
MACHINE_TABLE = TableSpec(
    title="Machine raters against humans (rater humans: the humans among themselves, the ceiling)",
    metrics=("agreement.machine_alpha", "agreement.machine_kappa"),
    keys=("question", "level", "rater", "against"),
    details=("pairs",),
    note="against majority: for humans, the majority of the other humans of the unit; "
    "kappa is quadratic-weighted for ordinal scales.",
)
RATER_TABLE = TableSpec(
    title="Raters against the humans, per question: calibrated or not",
    metrics=("agreement.rater_calibration",),
    keys=("rater", "question", "level"),
    details=("items", "kappa_vs_humans", "kappa_vs_majority", "mae", "ceiling", "calibrated"),
    value_label="alpha vs humans",
    note="rater humans: the humans among themselves (each against the others), the ceiling. "
    "A rater whose alpha is below the ceiling by more than the margin (RATER_CALIBRATION_MARGIN) "
    "is not calibrated. kappa is quadratic-weighted for ordinal scales; MAE against the humans' "
    "mean rating of the item (ratings only); items = items the rater and a human both rated.",
    marks=frozenset({NOT_CALIBRATED}),
)
RATER_EACH_HUMAN_TABLE = TableSpec(
    title="Cohen's kappa of each rater with each human annotator",
    metrics=("agreement.machine_kappa",),
    keys=("question", "level", "rater", "against", "annotator"),
    details=("weights",),
    note="Annotators by their pseudonym in the study's exports; n = items both rated.",
)
# Shown after the kind's own tables (the per-question table comes before them).
MORE_AGREEMENT_TABLES = (
    POOLED_TABLE,
    QUESTION_GROUP_TABLE,
    SYSTEM_TABLE,
    RATER_TABLE,
    MACHINE_TABLE,
    RATER_EACH_HUMAN_TABLE,
    PAIRWISE_TABLE,
    KAPPA_MATRIX_TABLE,
)
ALPHA_PLOT = PlotSpec(
    name="alpha",
    title="Krippendorff's alpha per question",
    metric="agreement.krippendorff_alpha",
    x="question",
    hue="level",
    ylabel="alpha",
)


RATER_PLOT = PlotSpec(
    name="raters",
    title="Alpha with the humans per question: humans (the ceiling) and each rater",
    metric="agreement.rater_calibration",
    x="question",
    hue="rater",
    ylabel="alpha",
    fixed=("level",),
)


def progress_rows(data: StudyData) -> list[ReportRow]:
    """Collection progress of one population: the humans' answers (attention checks
    counted apart); machine raters' answers are only counted, in the details, since
    ``annotations_per_item`` asks for human annotators. In the ``passed`` population these
    are exactly the answers that count (``annotation/services/populations.py``), so its rows
    agree with the overview, the API, the admin and the quota."""
    machine = data.machine_responses()
    machine_raters = count_distinct(data.responses["participant"][machine])
    machine_answers = int(machine.sum())
    data = data.humans()
    responses = data.responses
    attention = responses["attention"]
    analysed_items = responses["item"][~attention]
    real_items = ~data.items["attention"]
    per_item = np.bincount(analysed_items, minlength=len(data.items))[real_items]
    wanted = data.annotations_per_item
    seconds = responses["seconds"][~np.isnan(responses["seconds"])]
    failed = attention & (responses["correct"] == 0)
    return [
        row(
            "progress.responses",
            {},
            Estimate(float((~attention).sum()), n=int((~attention).sum())),
            attention_checks=int(attention.sum()),
            machine_responses=machine_answers,
        ),
        row(
            "progress.participants",
            {},
            Estimate(float(count_distinct(responses["participant"])), n=len(responses)),
            machine_raters=machine_raters,
        ),
        row(
            "progress.items_complete",
            {},
            Estimate(float((per_item >= wanted).sum()), n=int(real_items.sum())),
            annotations_per_item=wanted,
            items_started=int((per_item > 0).sum()),
        ),
        row(
            "progress.median_seconds_per_page",
            {},
            Estimate(float(np.median(seconds)), n=int(seconds.size))
            if seconds.size
            else Estimate.undefined("no timed pages"),
        ),
        row(
            "progress.attention_failures",
            {},
            Estimate(float(failed.sum()), n=int(attention.sum())),
            participants_failed=count_distinct(responses["participant"][failed]),
        ),
    ]


def study_rows(
    builder: KindReport,
    data: StudyData,
    *,
    embed: Embed | None = None,
    calibration_margin: float = DEFAULT_CALIBRATION_MARGIN,
) -> list[ReportRow]:
    """All figures of one population: progress, agreement (among human annotators, grouped
    by question, pooled, by question group and by provenance; machine raters beside the
    humans), annotator competence and aggregated labels (``competence``), the figures that
    combine the humans with a judge (``hybrid``), and the kind's own.

    Human answers are selected here, once (``StudyData.humans``): the kind's figures see
    nothing else; the rows that compare machine raters with humans (``agreement.machine_*``,
    a builder's ``machine_rows``) get the whole population and say which rater each is;
    ``calibration_margin``: how far below the humans' agreement a rater is still calibrated."""
    rows = progress_rows(data)
    analysed = data.analysed()
    del data  # one copy of the population at a time
    config = analysed.config
    order = builder.question_order(config)
    # the agreement values as codes, read once for agreement and competence alike
    ratings = (
        Ratings.of(analysed, order, builder.observation_systems(analysed))
        if len(analysed.observations)
        else None
    )
    rows += agreement_scope_rows(
        analysed, builder.question_groups(config), order, margin=calibration_margin, ratings=ratings
    )
    rows += competence_rows(analysed, order, ratings=ratings)
    rows += builder.machine_rows(analysed, embed=embed)
    rows += hybrid_rows(builder, analysed, rows)
    rows += builder.rows(analysed.humans(), embed=embed)
    return rows
