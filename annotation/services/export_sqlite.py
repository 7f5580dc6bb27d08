"""A study as a standalone SQLite database, zipped with a README describing its tables.

A researcher opens ``<slug>.sqlite`` with ``sqlite3`` or ``pandas.read_sql`` without our
code. Participants appear only under their pseudonym (the same one as in the CSV/JSONL
exports); JSON values are stored as JSON text. Rows are copied in batches from streaming
queries, so memory does not grow with the study.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.db.models import QuerySet

from annotation.models import Assignment, Enrollment, Item, Response, Study
from scoring.models import Report

from .export_rows import rows_written
from .jobs import Progress, no_progress
from .pseudonyms import PseudonymCache

BATCH = 2000


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # SQLite column type
    source: str  # ORM lookup on the table's queryset
    description: str
    is_json: bool = False


@dataclass(frozen=True)
class Table:
    name: str
    description: str
    fields: list[Field]
    rows: Callable[[Study], QuerySet]  # the queryset to copy


def _participant_fields(include_platform_ids: bool) -> list[Field]:
    fields = [
        Field("participant", "TEXT PRIMARY KEY", "participant_id", "Pseudonym (salted hash, per study)."),
        Field("source", "TEXT", "participant__source", "organic, prolific, mturk, lab, expert or model."),
    ]
    if include_platform_ids:
        fields.append(
            Field(
                "platform_worker_id", "TEXT", "participant__platform_worker_id", "Crowd-platform id (admin)."
            )
        )
    return [
        *fields,
        Field("status", "TEXT", "status", "started, active, completed, screened_out or returned."),
        Field("answered_count", "INTEGER", "answered_count", "Pages answered in this study."),
        Field("points_total", "REAL", "points_total", "Points scored in this study."),
        Field("attention_passed", "INTEGER", "attention_passed", "Attention checks passed."),
        Field("attention_failed", "INTEGER", "attention_failed", "Attention checks failed."),
        Field("excluded", "INTEGER", "excluded", "1 when a researcher excluded them from reports."),
        Field("flagged", "INTEGER", "participant__flagged", "1 when flagged (by checks or a researcher)."),
        Field("flag_reason", "TEXT", "participant__flag_reason", "Why they were flagged."),
        Field("blocked", "INTEGER", "participant__blocked", "1 when blocked from the site."),
        Field("consented_at", "TEXT", "consented_at", "When they consented (UTC, ISO 8601)."),
        Field("finished_at", "TEXT", "finished_at", "When their session ended (UTC, ISO 8601)."),
    ]


STUDY = Table(
    "study",
    "One row: the study's settings.",
    [
        Field("slug", "TEXT PRIMARY KEY", "slug", "The study's address and name."),
        Field("title", "TEXT", "title", "Title shown to participants."),
        Field("kind", "TEXT", "kind", "Task kind (see docs/formats.md)."),
        Field("description", "TEXT", "description", "One paragraph about the study."),
        Field("instructions", "TEXT", "instructions", "Instructions (Markdown)."),
        Field("config", "TEXT", "config", "The kind's configuration (JSON).", is_json=True),
        Field("status", "TEXT", "status", "draft, live or closed."),
        Field("annotations_per_item", "INTEGER", "annotations_per_item", "Answers wanted per item."),
        Field("items_per_session", "INTEGER", "items_per_session", "Pages per participant."),
        Field("attention_check_rate", "REAL", "attention_check_rate", "Share of pages that are checks."),
        Field("max_attention_failures", "INTEGER", "max_attention_failures", "Failures allowed."),
        Field("created_at", "TEXT", "created_at", "When the study was created (UTC)."),
    ],
    lambda study: Study.objects.filter(pk=study.pk),
)
ITEMS = Table(
    "items",
    "Every item of the study, with the truth and gold the participants never saw.",
    [
        Field("id", "INTEGER PRIMARY KEY", "id", "Item id (referenced by assignments and responses)."),
        Field("external_id", "TEXT UNIQUE", "external_id", "Your id from the study file."),
        Field("is_attention_check", "INTEGER", "is_attention_check", "1 for attention checks."),
        Field("payload", "TEXT", "payload", "What the participant saw (JSON, the kind's payload).", True),
        Field("gold", "TEXT", "gold", "The expected answer, when given (JSON).", True),
        Field(
            "provenance",
            "TEXT",
            "provenance",
            "system, model, method, decoding, seed, source_id (JSON).",
            True,
        ),
    ],
    lambda study: Item.objects.filter(study=study).order_by("id"),
)
ASSIGNMENTS = Table(
    "assignments",
    "Every item handed to a participant, answered or not (expired and released ones too).",
    [
        Field("id", "INTEGER PRIMARY KEY", "id", "Assignment id."),
        Field("item_id", "INTEGER REFERENCES items(id)", "item_id", "The item."),
        Field("participant", "TEXT REFERENCES participants(participant)", "participant_id", "Pseudonym."),
        Field("position", "INTEGER", "position", "1-based page number in the participant's session."),
        Field("status", "TEXT", "status", "assigned, answered, expired or released."),
        Field("state", "TEXT", "state", "What the kind recorded when handing it out (JSON).", True),
        Field("assigned_at", "TEXT", "assigned_at", "UTC, ISO 8601."),
        Field("expires_at", "TEXT", "expires_at", "UTC, ISO 8601."),
        Field("shown_at", "TEXT", "shown_at", "UTC, ISO 8601."),
        Field("answered_at", "TEXT", "answered_at", "UTC, ISO 8601."),
    ],
    lambda study: Assignment.objects.filter(study=study).order_by("id"),
)
RESPONSES = Table(
    "responses",
    "One row per answer (the same rows as the CSV and JSONL exports).",
    [
        Field("id", "INTEGER PRIMARY KEY", "id", "Response id (response_id in the CSV)."),
        Field("assignment_id", "INTEGER REFERENCES assignments(id)", "assignment_id", "Its assignment."),
        Field("item_id", "INTEGER REFERENCES items(id)", "item_id", "The item."),
        Field("participant", "TEXT REFERENCES participants(participant)", "participant_id", "Pseudonym."),
        Field("answer", "TEXT", "answer", "The stored answer (JSON).", True),
        Field("points", "REAL", "points", "Points scored, when the kind scores points."),
        Field("correct", "INTEGER", "correct", "1/0 against gold or truth; NULL when unscored."),
        Field("score_details", "TEXT", "score_details", "The kind's extra scoring figures (JSON).", True),
        Field("display_order", "TEXT", "display_order", "What was shown, in which order (JSON).", True),
        Field("is_attention_check", "INTEGER", "is_attention_check", "1 for answers to attention checks."),
        Field("flagged", "INTEGER", "flagged", "1 when the participant failed the attention checks."),
        Field("shown_at", "TEXT", "shown_at", "UTC, ISO 8601."),
        Field("answered_at", "TEXT", "answered_at", "UTC, ISO 8601."),
        Field("duration_seconds", "REAL", "duration_seconds", "Seconds from shown to answered."),
        Field("imported", "INTEGER", "imported", "1 when imported rather than answered on the site."),
    ],
    lambda study: Response.objects.filter(study=study).order_by("id"),
)
REPORTS = Table(
    "reports",
    "The statistics computed for the study when the export ran (see docs/statistics.md).",
    [
        Field("id", "INTEGER PRIMARY KEY", "id", "Report row id."),
        Field("metric", "TEXT", "metric", "The figure's name."),
        Field("group", "TEXT", "group", 'The group it describes, e.g. {"system": "ROME"} (JSON).', True),
        Field("population", "TEXT", "population", "all, or passed (attention-check failures left out)."),
        Field("value", "REAL", "value", "The figure."),
        Field("n", "INTEGER", "n", "How many inputs it rests on."),
        Field("ci_low", "REAL", "ci_low", "Lower end of its confidence interval."),
        Field("ci_high", "REAL", "ci_high", "Upper end of its confidence interval."),
        Field("details", "TEXT", "details", "Anything else the metric reports (JSON).", True),
        Field("computed_at", "TEXT", "computed_at", "UTC, ISO 8601."),
    ],
    lambda study: Report.objects.filter(study=study).order_by("id"),
)


def tables(include_platform_ids: bool) -> list[Table]:
    participants = Table(
        "participants",
        "Everyone enrolled in the study, under a pseudonym, with their session's figures.",
        _participant_fields(include_platform_ids),
        lambda study: Enrollment.objects.filter(study=study).order_by("id"),
    )
    return [STUDY, ITEMS, participants, ASSIGNMENTS, RESPONSES, REPORTS]


def write_sqlite_archive(
    study: Study, path: Path, *, include_platform_ids: bool, progress: Progress = no_progress
) -> int:
    """Build ``<slug>.sqlite`` and ``README.md`` and zip them to ``path``; returns response rows."""
    chosen = tables(include_platform_ids)
    names = _pseudonyms(study)
    with tempfile.TemporaryDirectory() as work:
        database = Path(work) / f"{study.slug}.sqlite"
        connection = sqlite3.connect(database)
        try:
            total = sum(table.rows(study).count() for table in chosen)
            done = 0
            for table in chosen:
                done = _copy_table(connection, table, study, names, done, total, progress)
            connection.commit()
        finally:
            connection.close()
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.write(database, database.name)
            archive.writestr("README.md", readme(study, chosen))
    return Response.objects.filter(study=study).count()


def _pseudonyms(study: Study):
    """participant row id → pseudonym, for the participants of this study only."""
    cache = PseudonymCache(study.pseudonym_salt)
    known = Enrollment.objects.filter(study=study).values_list(
        "participant_id", "participant__source", "participant__platform_worker_id", "participant__public_id"
    )
    lookup = {}
    for participant_id, source, worker_id, public_id in known.iterator(chunk_size=BATCH):
        lookup[participant_id] = cache.get(participant_id, source, worker_id, public_id)
    return lookup


def _copy_table(connection, table: Table, study: Study, names: dict, done: int, total: int, progress) -> int:
    columns = ", ".join(f'"{field.name}" {field.type}' for field in table.fields)
    connection.execute(f'CREATE TABLE "{table.name}" ({columns})')
    marks = ", ".join("?" for _ in table.fields)
    insert = f'INSERT INTO "{table.name}" VALUES ({marks})'  # noqa: S608 - names are ours
    sources = [field.source for field in table.fields]
    pseudonymised = [i for i, field in enumerate(table.fields) if field.source == "participant_id"]
    batch = []
    for raw in table.rows(study).values_list(*sources).iterator(chunk_size=BATCH):
        row = [_sqlite_value(value, field.is_json) for value, field in zip(raw, table.fields, strict=True)]
        for index in pseudonymised:
            row[index] = names.get(raw[index])
        batch.append(row)
        if len(batch) >= BATCH:
            done = _flush(connection, insert, batch, done, total, progress)
    return _flush(connection, insert, batch, done, total, progress)


def _flush(connection, insert: str, batch: list, done: int, total: int, progress) -> int:
    connection.executemany(insert, batch)
    done += len(batch)
    batch.clear()
    rows_written(progress, done, total)
    return done


def _sqlite_value(value, is_json: bool):
    if is_json:
        return None if value is None else json.dumps(value, ensure_ascii=False)
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, bool):
        return int(value)
    return value


def readme(study: Study, chosen: list[Table]) -> str:
    """The archive's README: what each table and column holds."""
    lines = [
        f"# Export of study `{study.slug}` ({study.kind})",
        "",
        f"`{study.slug}.sqlite` is a SQLite 3 database. Open it with `sqlite3 {study.slug}.sqlite` or",
        f"`pandas.read_sql('SELECT * FROM responses', sqlite3.connect('{study.slug}.sqlite'))`.",  # noqa: S608
        "JSON values are stored as JSON text (SQLite's `json_extract` reads them); times are UTC in",
        "ISO 8601; booleans are 1/0. Participants appear only under a pseudonym: a salted hash that",
        "is the same in every export of this study and differs between studies.",
        "",
    ]
    for table in chosen:
        lines += [f"## Table `{table.name}`", "", table.description, "", "| column | type | meaning |"]
        lines.append("| --- | --- | --- |")
        lines += [f"| `{f.name}` | {f.type} | {f.description} |" for f in table.fields]
        lines.append("")
    return "\n".join(lines)
