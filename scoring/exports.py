"""What ``scoring`` adds to a study's exports: the ``reports`` table of the SQLite dump (and
of the dataset release), and the datasheet that is the dataset release's card.

Registered with ``annotation.services.exports.sqlite.register_table`` by
``ScoringConfig.ready``, so the dump carries the study's report rows while ``annotation``
does not import ``scoring``.
"""

from __future__ import annotations

from annotation.services.exports.columns import Column
from annotation.services.exports.dataset import register_card
from annotation.services.exports.sqlite import Table, register_table
from scoring.datasheet import as_markdown, datasheet_of
from scoring.models import Report


def reports_table() -> Table:
    """The study's report rows as they were when the export ran."""
    return Table(
        "reports",
        "The statistics computed for the study when the export ran (see docs/statistics.md).",
        [
            Column("id", "integer", "rep.id", "Report row id.", sqlite_type="INTEGER PRIMARY KEY"),
            Column("metric", "text", "rep.metric", "The figure's name."),
            Column("group", "json", 'rep."group"', 'The group it describes, e.g. {"system": "ROME"} (JSON).'),
            Column(
                "population",
                "text",
                "rep.population",
                "all, or passed (participants flagged or excluded in the study left out).",
            ),
            Column(
                "version",
                "integer",
                "rep.version",
                "Empty: every answer's figure; a number: the figure of the answers given under that "
                "version of the study alone.",
            ),
            Column("value", "real", "rep.value", "The figure."),
            Column("n", "integer", "rep.n", "How many inputs it rests on."),
            Column("ci_low", "real", "rep.ci_low", "Lower end of its confidence interval."),
            Column("ci_high", "real", "rep.ci_high", "Upper end of its confidence interval."),
            Column("details", "json", "rep.details", "Anything else the metric reports (JSON)."),
            Column("computed_at", "time", "rep.computed_at", "UTC, ISO 8601."),
        ],
        f"FROM {Report._meta.db_table} rep WHERE rep.study_id = %s ORDER BY rep.id",
    )


register_table(reports_table)


def aggregated_labels_table() -> Table:
    """Each item's aggregated label (per categorical question and model), from the reports
    of the ``passed`` population: the answers that count."""
    group, details = 'rep."group"', "rep.details"
    return Table(
        "aggregated_labels",
        "Per item and categorical question, the label MACE and Dawid-Skene infer from the "
        "answers that count, with its posterior probability (an ordinal question: the median "
        "answer, with the share of answers equal to it), when the reports were last computed.",
        [
            Column("item", "text", f"{group} ->> 'item'", "The item's external id."),
            Column(
                "unit",
                "text",
                f"COALESCE({group} ->> 'unit', '')",
                "The part of the item the question asks about (a claim's evidence sentence), else empty.",
            ),
            Column("question", "text", f"{group} ->> 'question'", "The question."),
            Column(
                "model",
                "text",
                f"{group} ->> 'model'",
                "mace or dawid_skene (nominal questions); median (ordinal questions, scales).",
            ),
            Column("label", "text", f"{details} ->> 'label'", "The aggregated label."),
            Column(
                "posterior",
                "real",
                "rep.value",
                "Its posterior probability under the model (median: the share of answers equal to it).",
            ),
            Column("majority", "text", f"{details} ->> 'majority'", "The majority vote (empty on a tie)."),
            Column("adjudicated", "text", f"{details} ->> 'adjudicated'", "The adjudicated answer, if any."),
            Column("answers", "integer", "rep.n", "How many answers the item had."),
        ],
        f"FROM {Report._meta.db_table} rep WHERE rep.study_id = %s "
        "AND rep.metric = 'competence.label' AND rep.population = 'passed' AND rep.version IS NULL "
        "ORDER BY rep.id",
    )


register_table(aggregated_labels_table)


def datasheet_card(study) -> str:
    """The dataset card's body: the study's HEDS datasheet (``scoring.datasheet``)."""
    return as_markdown(datasheet_of(study))


register_card(datasheet_card)
