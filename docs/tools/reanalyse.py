"""Recompute a study's report rows from its SQLite export alone, and compare them with the
rows the export carries.

    python docs/tools/reanalyse.py EXPORT [--json]

EXPORT is the export job's zip (``<slug>.sqlite`` and its README) or the ``.sqlite`` file
itself (``python manage.py exportstudy SLUG --format sqlite --output x.zip``). The script
reads nothing but that file: the study's config, its items, participants (under their
pseudonyms), answers and their study versions, then builds the same columns the site's
reports job builds from its database (``scoring/data.py``) and runs the same figures
(``scoring/reports``, on the ``stats`` package) for every population and, where the answers
span several study versions, for each version. Each recomputed row is matched to the
export's ``reports`` row with the same population, version, metric and group, and compared
to 1e-9 (value, n, interval, and every number in its details). It prints the rows that
differ or are missing and exits 1 if any do; ``--json`` prints the recomputed rows.

It needs this repository on the path (it imports ``scoring`` and ``stats``; Django is set up
with an in-memory database it never reads). What it cannot rebuild from a pseudonymised
export, and so reports as missing rather than equal: the rows of machine raters grouped by
their names (the export shows pseudonyms), and an adaptive study's stopping-rule row (the
site computes it from its live state). Rows are read in id order (answers of kinds that
compute agreement answer by answer: by item, then id), as the reports job reads them;
participants in the order the export lists them (the reports' order), then the adjudicators
(who are not enrolled) in the order of their first answer: exact when no one enrolled after
the first adjudication, which is how a study is adjudicated (after collection).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-9


def setup_django() -> None:
    """Django only for the kinds' and reports' imports; its database is never opened."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
    os.environ.setdefault("SECRET_KEY", "reanalysis-only")
    os.environ.setdefault("DATABASE_URL", "sqlite:///:memory:")
    import django

    django.setup()


# --- reading the export --------------------------------------------------------------------


def open_export(path: Path, work: Path) -> sqlite3.Connection:
    """The export's database (unzipped into ``work`` when ``path`` is the zip)."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zipped:
            name = next(n for n in zipped.namelist() if n.endswith(".sqlite"))
            zipped.extract(name, work)
        path = work / name
    connection = sqlite3.connect(path)
    connection.row_factory = sqlite3.Row
    return connection


def _rows(connection: sqlite3.Connection, sql: str) -> list[dict]:
    return [dict(row) for row in connection.execute(sql)]


JSON_COLUMNS = {"payload", "gold", "provenance", "answer", "score_details", "display_order", "config"}


def _decoded(record: dict) -> dict:
    return {k: json.loads(v) if k in JSON_COLUMNS and isinstance(v, str) else v for k, v in record.items()}


@dataclass
class Export:
    study: dict
    items: list[dict]
    participants: list[dict]
    responses: list[dict]
    reports: list[dict]


def read_export(connection: sqlite3.Connection) -> Export:
    return Export(
        study=_decoded(_rows(connection, "SELECT * FROM study")[0]),
        items=[_decoded(r) for r in _rows(connection, "SELECT rowid AS row, * FROM items ORDER BY rowid")],
        participants=_rows(connection, "SELECT * FROM participants ORDER BY rowid"),
        responses=[_decoded(r) for r in _rows(connection, "SELECT * FROM responses ORDER BY response_id")],
        reports=[
            {**r, "group": json.loads(r["group"]), "details": json.loads(r["details"] or "{}")}
            for r in _rows(connection, "SELECT * FROM reports ORDER BY id")
        ],
    )


# --- the values a Field names (scoring.reports.base.Field), as the database gives them ------


def field_value(record: dict, field):
    """``field.path`` (``answer__guess``, ``payload__passages__0__id``, ``flagged``) in one
    exported row, converted as the loader's SQL converts it."""
    parts = field.path.split("__")
    value = record.get(EXPORT_NAMES.get(parts[0], parts[0]))
    for key in parts[1:]:
        if isinstance(value, dict):
            value = value.get(key)
        elif isinstance(value, list) and key.lstrip("-").isdigit() and -len(value) <= int(key) < len(value):
            value = value[int(key)]
        else:
            value = None
    kind = field.type
    if kind == "length":  # a text's length in characters, as the database counts it
        return float(len(value)) if isinstance(value, str) else math.nan
    if kind in ("column", "truth", "number"):
        if value is None or (kind == "number" and isinstance(value, (dict, list))):
            return math.nan
        return float(value)
    if kind in ("text", "label"):
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return value  # json: the decoded value


# The loader's lookups named as the export names their columns.
EXPORT_NAMES = {"external_id": "item"}


# --- building the study's columns as scoring/data.py does ------------------------------------


def study_data(export: Export):
    """``scoring.data.load_study_data``'s ``StudyData``, from the export's tables."""
    import numpy as np

    from annotation.kinds import get_kind
    from annotation.models import Item, Study
    from scoring.data import _RESPONSE_FIELDS as RESPONSE_FIELDS
    from scoring.data import (
        DEFAULT_BY,
        _array,
        _column_type,
        _declared_fields,
        _declared_observations,
        _objects,
    )
    from scoring.reports import report_for
    from scoring.reports.base import Columns, Field, StudyData, observation_columns
    from stats.counting import row_numbers

    s = export.study
    kind, builder = get_kind(s["kind"]), report_for(s["kind"])
    declared = () if kind.agreement_per_answer else kind.agreement_fields
    item_fields = {
        "attention": Field("is_attention_check", "truth"),
        "external_id": Field("external_id", "label"),
    } | builder.item_fields
    item_fields |= {f"provenance:{key}": Field(f"provenance__{key}", "text") for key in DEFAULT_BY}
    item_row = {item["item"]: index for index, item in enumerate(export.items)}
    items = _columns(export.items, item_fields, _column_type, _array, Columns)
    item_ids = np.arange(len(export.items), dtype=np.float64)  # the items' ids, in id order

    # participants: the loader sorts them by id; the export lists them in that order, and
    # those who answered without an enrollment (adjudicators) after them
    order = [p["participant"] for p in export.participants]
    seen = set(order)
    for response in export.responses:
        if response["participant"] not in seen:
            order.append(response["participant"])
            seen.add(response["participant"])
    enrolled = {p["participant"]: p for p in export.participants}
    adjudicators = {r["participant"] for r in export.responses if r.get("adjudicated")}
    model = np.array(
        [enrolled.get(name, {}).get("participant_source") == "model" for name in order], dtype=bool
    )
    excluded = np.array([bool(enrolled.get(name, {}).get("excluded")) for name in order], dtype=bool)
    names = np.full(len(order), "", dtype=object)
    names[model] = np.array(order, dtype=object)[model]  # a model's name: its pseudonym here
    participants = Columns(
        {
            "model": model,
            "name": names,
            "definition": np.full(len(order), None, dtype=object),
            "adjudicator": np.array([name in adjudicators for name in order], dtype=bool),
        }
    )
    participant_ids = np.arange(len(order), dtype=np.int64)
    position = {name: index for index, name in enumerate(order)}

    fields = RESPONSE_FIELDS | builder.response_fields | _declared_fields(declared)
    answers = [
        {**r, "item_id": float(item_row[r["item"]]), "participant_id": float(position[r["participant"]])}
        for r in export.responses
    ]
    if kind.agreement_per_answer:
        answers.sort(key=lambda r: (r["item_id"], r["response_id"]))
        responses = _columns(
            answers, {"id": Field("response_id", "column"), **fields}, _column_type, _array, Columns
        )
        probe = Study(slug=s["study"], kind=s["kind"], config=s["config"] or {})
        found: tuple[list, list, list, list, list] = ([], [], [], [], [])
        for index, answer in enumerate(answers):
            entry = export.items[int(answer["item_id"])]
            item = Item(
                study=probe,
                external_id=entry["item"],
                payload=entry["payload"],
                gold=entry["gold"],
                provenance=entry["provenance"] or {},
                is_attention_check=bool(entry["is_attention_check"]),
            )
            for observation in kind.agreement_values(item, answer["answer"]):
                for values, value in zip(
                    found,
                    (index, observation.unit, observation.question, observation.value, observation.level),
                    strict=True,
                ):
                    values.append(value)
        observations = observation_columns(found[0], *(_objects(values) for values in found[1:]))
    else:
        responses = _columns(answers, fields, _column_type, _array, Columns)
        observations = None
    responses.data["item"] = row_numbers(item_ids, responses.data.pop("item_id"))
    responses.data["participant"] = row_numbers(participant_ids, responses.data.pop("participant_id"))
    responses.data["excluded"] = excluded[responses["participant"]]
    responses.data["adjudicator"] = participants["adjudicator"][responses["participant"]]
    items.data["adjudicated"] = np.zeros(len(items), dtype=bool)
    items.data["adjudicated"][responses["item"][responses["adjudicator"]]] = True
    for name in ("attention", "flagged"):
        responses.data[name] = responses[name] == 1
    items.data["attention"] = items["attention"] == 1
    if observations is None:
        observations = _declared_observations(responses, declared)

    def labels(rows) -> list[str]:
        return [order[int(row)] for row in np.asarray(rows, dtype=np.int64)]

    return builder, StudyData(
        kind=s["kind"],
        config=s["config"] or {},
        annotations_per_item=s["annotations_per_item"],
        items=items,
        responses=responses,
        participants=participants,
        observations=observations,
        rater_labels=labels,
    )


def _columns(records: list[dict], fields: dict, column_type, array, columns_class):
    """One array per field, converted as ``scoring.data._collect`` converts the database's values."""
    return columns_class(
        {
            name: array(tuple(field_value(record, field) for record in records), column_type(field))
            for name, field in fields.items()
        }
    )


# --- recomputing and comparing ---------------------------------------------------------------


def recompute(export: Export) -> list[dict]:
    """Every report row the reports job stores for the study, recomputed."""
    from django.conf import settings

    from scoring.reports.common import study_rows
    from scoring.services import populations_of, split_versions

    builder, data = study_data(export)
    margin = settings.RATER_CALIBRATION_MARGIN
    found = []
    populations = populations_of(data)
    for population in populations:
        for r in study_rows(builder, data.population(population), calibration_margin=margin):
            found.append(_row(r, population, None))
    for version in split_versions(data):
        of_version = data.where(data.responses["version"] == version)
        for population in populations:
            for r in study_rows(builder, of_version.population(population), calibration_margin=margin):
                found.append(_row(r, population, version))
    return found


def _row(r, population: str, version: int | None) -> dict:
    """A recomputed row as the database would hand it back (its JSON round-tripped)."""
    return json.loads(
        json.dumps(
            {
                "population": population,
                "version": version,
                "metric": r.metric,
                "group": r.group,
                "value": r.value,
                "n": r.n,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "details": r.details,
            }
        )
    )


def _key(row: dict) -> tuple:
    return (row["population"], row["version"], row["metric"], json.dumps(row["group"], sort_keys=True))


def close(a, b) -> bool:
    """Equal to ``TOLERANCE`` (numbers), recursively (lists, objects), exactly (the rest)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@dataclass
class Comparison:
    rows: int
    equal: int
    differing: list[tuple[dict, dict]]
    missing: list[dict]  # in the export, not recomputed
    extra: list[dict]  # recomputed, not in the export

    @property
    def reproduced(self) -> bool:
        return not (self.differing or self.missing or self.extra)


def compare(stored: list[dict], recomputed: list[dict]) -> Comparison:
    """Each stored row against its recomputed twin. An export without stored rows (its
    reports were never computed) has nothing to compare: an empty comparison."""
    if not stored:
        return Comparison(0, 0, [], [], [])
    by_key: dict[tuple, list[dict]] = {}
    for row in recomputed:
        by_key.setdefault(_key(row), []).append(row)
    differing, missing, equal = [], [], 0
    for row in stored:
        candidates = by_key.get(_key(row)) or []
        if not candidates:
            missing.append(row)
            continue
        mine = candidates.pop(0)
        fields = ("value", "n", "ci_low", "ci_high", "details")
        if all(close(row[f], mine[f]) for f in fields):
            equal += 1
        else:
            differing.append((row, mine))
    extra = [row for rows in by_key.values() for row in rows]
    return Comparison(len(stored), equal, differing, missing, extra)


def reanalyse(path: Path) -> Comparison:
    """Recompute the export at ``path`` and compare with its stored rows (Django set up)."""
    with tempfile.TemporaryDirectory() as work:
        connection = open_export(Path(path), Path(work))
        try:
            export = read_export(connection)
        finally:
            connection.close()
    return compare(export.reports, recompute(export))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("export", type=Path, help="the SQLite export (.zip or .sqlite)")
    parser.add_argument("--json", action="store_true", help="print the recomputed rows as JSON")
    args = parser.parse_args()
    setup_django()
    if args.json:
        with tempfile.TemporaryDirectory() as work:
            export = read_export(open_export(args.export, Path(work)))
        print(json.dumps(recompute(export), indent=1))
        return 0
    result = reanalyse(args.export)
    for stored, mine in result.differing:
        print(
            f"differs: {_key(stored)}: stored {stored['value']} [{stored['ci_low']}, {stored['ci_high']}], "
            f"recomputed {mine['value']} [{mine['ci_low']}, {mine['ci_high']}]"
        )
    for row in result.missing:
        print(f"not recomputed: {_key(row)}")
    for row in result.extra:
        print(f"not in the export: {_key(row)}")
    print(f"{result.equal} of {result.rows} report rows reproduced to {TOLERANCE:g}.")
    return 0 if result.reproduced else 1


if __name__ == "__main__":
    sys.exit(main())
