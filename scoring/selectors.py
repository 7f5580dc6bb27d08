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
from annotation.services.analysis.competence import NO_FIGURE, Competence, Interval
from annotation.services.participation.adaptive import StoppingNow
from scoring.adaptive import STOPPING_METRIC, STOPPING_POPULATION, STOPPING_TABLE
from scoring.models import Report
from scoring.plots import plotted, points_for
from scoring.reports import report_for
from scoring.reports.base import PlotSpec, TableSpec
from scoring.reports.common import AGREEMENT_TABLE, ALPHA_PLOT, MORE_AGREEMENT_TABLES, RATER_PLOT
from scoring.reports.competence import COMPETENCE_TABLES
from scoring.reports.competence import MEASURES as COMPETENCE_MEASURES
from scoring.reports.hybrid import TABLES as HYBRID_TABLES
from stats.competence import UNESTIMABLE

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
    undefined: bool = False  # the text is a reason, not a figure: the page sets it small, wrapped
    mark: bool = False  # a value the table marks as a warning (``TableSpec.marks``)
    # ``text`` split where a narrow column may break it: the figure, then its interval
    value: str = ""
    interval: str = ""


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
    # Plots with nothing to draw, with the reason, shown as text instead of an image.
    empty_plots: list[tuple[PlotSpec, str]] = field(default_factory=list)
    attention_checks: int = 0  # attention-check pages among the responses counted
    machine_responses: int = 0  # answers of machine raters among them (in no human figure)

    @property
    def empty(self) -> bool:
        return self.computed_at is None


def study_reports(study: Study, population: str, version: int | None = None) -> list[Report]:
    return list(Report.objects.filter(study=study).chosen(population, version).order_by("metric", "id"))


def report_versions(study: Study) -> list[int]:
    """The study versions with figures of their own (answers spanning several versions)."""
    found = Report.objects.filter(study=study, version__isnull=False).values_list("version", flat=True)
    return sorted({version for version in found.distinct() if version is not None})


def plot_specs(study: Study) -> dict[str, PlotSpec]:
    """The plots a study's dashboard may show, by name."""
    return {spec.name: spec for spec in (*report_for(study.kind).plots, ALPHA_PLOT, RATER_PLOT)}


def reports_version(reports: list[Report]) -> str:
    """A short key that changes whenever the stored reports change (for caching plots)."""
    if not reports:
        return "none"
    first = reports[0]
    source = json.dumps([first.fingerprint, first.computed_at.isoformat(), len(reports)], sort_keys=True)
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def dashboard_view(study: Study, population: str, version: int | None = None) -> DashboardView:
    reports = study_reports(study, population, version)
    if not reports:
        return DashboardView(population=population, computed_at=None, fingerprint={})
    builder = report_for(study.kind)
    view = DashboardView(
        population=population, computed_at=reports[0].computed_at, fingerprint=reports[0].fingerprint
    )
    view.progress = progress_cards(
        {r.metric: r for r in reports if r.metric in PROGRESS_METRICS and not r.group}
    )
    tables = (
        STOPPING_TABLE,
        AGREEMENT_TABLE,
        *builder.tables,
        *HYBRID_TABLES,
        *MORE_AGREEMENT_TABLES,
        *COMPETENCE_TABLES,
    )
    for spec in tables:
        table = table_view(spec, reports)
        if table.rows:
            view.tables.append(table)
    for plot in plot_specs(study).values():
        if points_for(plot, reports):
            view.plots.append(plot)
        elif any(plotted(plot, r) for r in reports):
            # only a plot whose figures exist but are undefined says so: precision grouped by
            # mode alone is no empty plot of precision by system, nor a pooled mean one of
            # means per system
            view.empty_plots.append((plot, _undefined_reason(plot, reports)))
    responses = next((r for r in reports if r.metric == "progress.responses" and not r.group), None)
    details = (responses.details or {}) if responses else {}
    view.attention_checks = int(details.get("attention_checks", 0))
    view.machine_responses = int(details.get("machine_responses", 0))
    return view


def _undefined_reason(spec: PlotSpec, reports: list[Report]) -> str:
    """Why a plot has no point: the reason its figures are undefined, or that none is."""
    reasons = sorted(
        {r.details["reason"] for r in reports if plotted(spec, r) and (r.details or {}).get("reason")}
    )
    return "; ".join(reasons) if reasons else "no figure of this kind is defined yet"


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
        checks = int((responses.details or {}).get("attention_checks", 0)) if responses else 0
        detail = f"{count} answers to items" + (f", plus {checks} attention-check pages" if checks else "")
        if machines := int((people.details or {}).get("machine_raters", 0)):
            answers = int((responses.details or {}).get("machine_responses", 0)) if responses else 0
            raters = "machine rater" if machines == 1 else "machine raters"
            detail += f"; {machines} {raters} ({answers} answers) counted apart"
        cards.append(Card("Participants", format_number(people.value), detail))
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


# Column headers of details that are read better under another name.
DETAIL_LABELS = {
    "p_value": "p",
    "p_holm": "p (Holm-adjusted)",
    "dof": "dof",
    "mae": "MAE",
    "mae_ceiling": "MAE ceiling",
    "lam": "λ (judge's weight)",
    "n_judge": "judge alone (n)",
}
# Details that count answers, though estimated (the human answers a judge was worth): whole.
WHOLE_DETAILS = frozenset({"effective_n"})


def table_view(spec: TableSpec, reports: list[Report]) -> TableView:
    """Rows = distinct group values of ``spec.keys``; a column per metric and detail.

    Rows keep the order the builder wrote the figures in (``reports`` in id order), which
    is scale order for categories; numbers sort as numbers. A figure that is undefined
    shows its reason in its cell.
    """
    wanted = set(spec.keys)
    cells: dict[tuple, dict[str, Report]] = {}
    for report in reports:
        if report.metric in spec.metrics and set(report.group) == wanted:
            key = tuple(report.group[k] for k in spec.keys)
            cells.setdefault(key, {})[report.metric] = report
    if spec.pair:
        cells = _one_direction(spec, cells)
    header = [k.replace("_", " ") for k in spec.keys]
    header += list(spec.labels) or [spec.value_label or _metric_label(m) for m in spec.metrics]
    header += [DETAIL_LABELS.get(d, d.replace("_", " ")) for d in spec.details]
    rows = []
    keys = sorted(cells, key=_order_of(list(cells)))
    note = spec.note
    if spec.max_rows and len(keys) > spec.max_rows:
        note = f"The first {spec.max_rows} of {len(keys)} rows. {note}".strip()
        keys = keys[: spec.max_rows]
    for key in keys:
        by_metric = cells[key]
        line = [Cell(str(value)) for value in key]
        line += [_value_cell(by_metric.get(metric)) for metric in spec.metrics]
        first = next(by_metric[m] for m in spec.metrics if m in by_metric)  # a key has one at least
        line += [_detail_cell(spec, (first.details or {}).get(d), d) for d in spec.details]
        rows.append(line)
    return TableView(spec.title, note, header, rows, numeric_from=len(spec.keys))


def _detail_cell(spec: TableSpec, value, name: str) -> Cell:
    text = format_number(value, name)
    return Cell(text, mark=isinstance(value, str) and value in spec.marks)


def _one_direction(spec: TableSpec, cells: dict[tuple, dict[str, Report]]) -> dict[tuple, dict[str, Report]]:
    """Each comparison once: of the rows (a over b) and (b over a), the one whose
    ``spec.pair_prefer`` detail (``value``: the figure itself) is larger (the first seen on
    a tie or when it is missing)."""
    side, other = (spec.keys.index(k) for k in spec.pair)
    kept: dict[tuple, tuple] = {}
    for key, by_metric in cells.items():
        mirror = list(key)
        mirror[side], mirror[other] = key[other], key[side]
        partner = kept.get(tuple(mirror))
        if partner is None:
            kept[key] = key
            continue
        if _preference(spec, by_metric) > _preference(spec, cells[partner]):
            del kept[tuple(mirror)]
            kept[key] = key
    return {key: cells[key] for key in kept}


def _preference(spec: TableSpec, by_metric: dict[str, Report]) -> float:
    first = next(by_metric[m] for m in spec.metrics if m in by_metric)
    value = first.value if spec.pair_prefer == "value" else (first.details or {}).get(spec.pair_prefer)
    return float(value) if isinstance(value, int | float) and not math.isnan(value) else -math.inf


def format_number(value, name: str = "") -> str:
    """Counts as integers, p-values with a floor, other figures with three decimals."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if not isinstance(value, int | float):
        return str(value)
    if name.startswith("p_") and value < 0.001:
        return "< 0.001"
    if name in WHOLE_DETAILS and math.isfinite(value):
        return str(round(value))
    # A float a rounding error away from a whole number (1.9999999996, 1e-17) reads as that number.
    whole = round(float(value), 9)
    if whole.is_integer() and abs(whole) < 1e12 and not name.startswith("p_"):
        return str(int(whole))
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3f}"


def _value_cell(report: Report | None) -> Cell:
    if report is None:
        return Cell("—")
    reason = (report.details or {}).get("reason")
    if report.value is None and reason:
        return Cell(f"undefined: {reason}", f"n = {report.n}", undefined=True)
    percent = report.metric.endswith(".percent")
    name = "p_value" if report.metric.endswith(("sign_test", "wilcoxon", "chi_square")) else ""
    value = _as_percent(report.value) if percent else format_number(report.value, name)
    interval = ""
    if report.ci_low is not None and report.ci_high is not None and report.metric.endswith(".rank"):
        interval = f"[{format_number(report.ci_low)}–{format_number(report.ci_high)}]"  # a range of ranks
    elif report.ci_low is not None and report.ci_high is not None:
        shown = _as_percent if percent else format_number
        interval = f"[{shown(report.ci_low)}, {shown(report.ci_high)}]"
    hint = f"n = {report.n}"
    if reason:
        hint += f"; {reason}"
    text = f"{value} {interval}" if interval else value
    return Cell(text, hint, value=value, interval=interval)


def _as_percent(value) -> str:
    """A proportion (0.839) as a percentage (83.9%)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{100 * value:.1f}%"


def _metric_label(metric: str) -> str:
    return metric.split(".", 1)[-1].replace("_", " ")


def _order_of(keys: list[tuple]):
    """Sort key for table rows: numbers as numbers, anything else by first appearance."""
    seen: list[dict] = [{} for _ in keys[0]] if keys else []
    for key in keys:
        for position, value in enumerate(key):
            seen[position].setdefault(value, len(seen[position]))

    def order(key: tuple) -> tuple:
        return tuple(
            (0, value, 0) if isinstance(value, int | float) else (1, 0, seen[position][value])
            for position, value in enumerate(key)
        )

    return order


def annotator_competence(study: Study) -> dict[str, Competence]:
    """Pseudonym → the annotator's competence over the study's questions with its interval, as
    the last reports estimated it from every answer (the ``all`` population: a participant
    already flagged still has one). Registered for the participants page."""
    found: dict[str, dict] = {}
    rows = (
        Report.objects.filter(study=study, metric__in=[f"competence.{m}" for m in COMPETENCE_MEASURES])
        .chosen("all")
        .values_list("metric", "group", "value", "ci_low", "ci_high", "n", "details")
    )
    for metric, group, value, low, high, n, details in rows:
        if set(group) != {"annotator"}:
            continue  # per question: the page shows the pooled figure
        figures = found.setdefault(group["annotator"], {"answers": 0, "reason": ""})
        measure = metric.split(".", 1)[1]
        figures[measure] = Interval(value, low, high)
        figures["answers"] = max(figures["answers"], n)
        reason = (details or {}).get("reason", "")
        if value is None and reason.startswith(UNESTIMABLE):
            figures["reason"] = reason
    return {
        name: Competence(
            mace=f.get("mace", NO_FIGURE),
            dawid_skene=f.get("dawid_skene", NO_FIGURE),
            median_correlation=f.get("median_correlation", NO_FIGURE),
            answers=f["answers"],
            not_identifiable=f["reason"],
        )
        for name, f in found.items()
    }


def stopping_interval(study: Study) -> StoppingNow | None:
    """The stopping rule's figure of the last reports (``scoring.adaptive``), for the
    overview; None before the first. Registered on annotation's reader."""
    stored = (
        Report.objects.filter(study=study, metric=STOPPING_METRIC)
        .chosen(STOPPING_POPULATION)
        .only("value", "ci_low", "ci_high", "details", "computed_at")
        .first()
    )
    if stored is None:
        return None
    details = stored.details or {}
    return StoppingNow(
        difference=stored.value,
        low=stored.ci_low,
        high=stored.ci_high,
        n_first=int(details.get("n_first", 0)),
        n_second=int(details.get("n_second", 0)),
        looks=int(details.get("looks", 0)),
        met=bool(details.get("met")),
        computed_at=stored.computed_at,
    )
