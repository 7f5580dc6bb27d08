"""Reading stored reports for pages: one query per page, shaped into tables.

Pages never compute statistics; they lay out ``Report`` rows as the kind's report
builder describes (``TableSpec`` / ``PlotSpec``), so no page knows any kind by name.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from datetime import datetime

from annotation.models import Study
from scoring.models import Report
from scoring.reports import report_for
from scoring.reports.base import PlotSpec, TableSpec
from scoring.reports.common import AGREEMENT_TABLE, ALPHA_PLOT, MORE_AGREEMENT_TABLES

PROGRESS_METRICS = (
    "progress.items_complete",
    "progress.responses",
    "progress.participants",
    "progress.median_seconds_per_page",
    "progress.attention_failures",
)


@dataclass(frozen=True)
class Cell:
    text: str
    hint: str = ""


@dataclass
class TableView:
    title: str
    note: str
    header: list[str]
    rows: list[list[Cell]]
    numeric_from: int  # columns from this index on are numbers (right-aligned)


@dataclass(frozen=True)
class Card:
    label: str
    value: str
    detail: str


@dataclass
class DashboardView:
    population: str
    computed_at: datetime | None
    fingerprint: dict
    progress: list[Card] = field(default_factory=list)
    tables: list[TableView] = field(default_factory=list)
    plots: list[PlotSpec] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return self.computed_at is None


def study_reports(study: Study, population: str) -> list[Report]:
    return list(Report.objects.filter(study=study, population=population).order_by("metric", "id"))


def plot_specs(study: Study) -> dict[str, PlotSpec]:
    """The plots a study's dashboard may show, by name."""
    return {spec.name: spec for spec in (*report_for(study.kind).plots, ALPHA_PLOT)}


def reports_version(reports: list[Report]) -> str:
    """A short key that changes whenever the stored reports change (for caching plots)."""
    if not reports:
        return "none"
    first = reports[0]
    source = json.dumps([first.fingerprint, first.computed_at.isoformat(), len(reports)], sort_keys=True)
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def dashboard_view(study: Study, population: str) -> DashboardView:
    reports = study_reports(study, population)
    if not reports:
        return DashboardView(population=population, computed_at=None, fingerprint={})
    builder = report_for(study.kind)
    view = DashboardView(
        population=population, computed_at=reports[0].computed_at, fingerprint=reports[0].fingerprint
    )
    view.progress = progress_cards(
        {r.metric: r for r in reports if r.metric in PROGRESS_METRICS and not r.group}
    )
    for spec in (AGREEMENT_TABLE, *builder.tables, *MORE_AGREEMENT_TABLES):
        table = table_view(spec, reports)
        if table.rows:
            view.tables.append(table)
    metrics = {r.metric for r in reports}
    view.plots = [spec for spec in plot_specs(study).values() if spec.metric in metrics]
    return view


def progress_cards(progress: dict[str, Report]) -> list[Card]:
    """The collection figures as short cards (missing figures are skipped)."""
    cards = []
    if items := progress.get("progress.items_complete"):
        details = items.details or {}
        cards.append(
            Card(
                "Items complete",
                f"{format_number(items.value)} of {items.n}",
                f"{details.get('annotations_per_item')} answers wanted per item; "
                f"{details.get('items_started', 0)} items started",
            )
        )
    if people := progress.get("progress.participants"):
        responses = progress.get("progress.responses")
        count = format_number(responses.value) if responses else "—"
        cards.append(Card("Participants", format_number(people.value), f"{count} responses"))
    if seconds := progress.get("progress.median_seconds_per_page"):
        value = "—" if seconds.value is None else f"{seconds.value:.0f} s"
        cards.append(Card("Median time per page", value, f"over {seconds.n} timed pages"))
    if failures := progress.get("progress.attention_failures"):
        failed = (failures.details or {}).get("participants_failed", 0)
        cards.append(
            Card(
                "Attention-check failures",
                f"{format_number(failures.value)} of {failures.n}",
                f"{failed} participants failed a check",
            )
        )
    return cards


def table_view(spec: TableSpec, reports: list[Report]) -> TableView:
    """Rows = distinct group values of ``spec.keys``; a column per metric and detail."""
    wanted = set(spec.keys)
    cells: dict[tuple, dict[str, Report]] = {}
    for report in reports:
        if report.metric in spec.metrics and set(report.group) == wanted:
            key = tuple(report.group[k] for k in spec.keys)
            cells.setdefault(key, {})[report.metric] = report
    header = [k.replace("_", " ") for k in spec.keys] + [_metric_label(m) for m in spec.metrics]
    header += [d.replace("_", " ") for d in spec.details]
    rows = []
    for key in sorted(cells, key=_sort_key):
        by_metric = cells[key]
        line = [Cell(str(value)) for value in key]
        line += [_value_cell(by_metric.get(metric)) for metric in spec.metrics]
        first = next(by_metric[m] for m in spec.metrics if m in by_metric)  # a key has one at least
        line += [Cell(format_number((first.details or {}).get(d), d)) for d in spec.details]
        rows.append(line)
    return TableView(spec.title, spec.note, header, rows, numeric_from=len(spec.keys))


def format_number(value, name: str = "") -> str:
    """Counts as integers, p-values with a floor, other figures with three decimals."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if not isinstance(value, int | float):
        return str(value)
    if name.startswith("p_") and value < 0.001:
        return "< 0.001"
    if float(value).is_integer() and abs(value) < 1e12 and not name.startswith("p_"):
        return str(int(value))
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3f}"


def _value_cell(report: Report | None) -> Cell:
    if report is None:
        return Cell("—")
    name = "p_value" if report.metric.endswith(("sign_test", "wilcoxon", "chi_square")) else ""
    text = format_number(report.value, name)
    if report.ci_low is not None and report.ci_high is not None:
        text += f" [{format_number(report.ci_low)}, {format_number(report.ci_high)}]"
    hint = f"n = {report.n}"
    if report.details and report.details.get("reason"):
        hint += f"; {report.details['reason']}"
    return Cell(text, hint)


def _metric_label(metric: str) -> str:
    return metric.split(".", 1)[-1].replace("_", " ")


def _sort_key(key: tuple) -> tuple:
    return tuple((0, v, "") if isinstance(v, int | float) else (1, 0, str(v)) for v in key)
