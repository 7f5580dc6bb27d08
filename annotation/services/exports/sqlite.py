"""A study as a standalone SQLite database (zipped with a README describing its tables).

A researcher opens ``<slug>.sqlite`` with ``sqlite3`` or ``pandas.read_sql`` without our
code. Participants appear only under their pseudonym (the same one as in the CSV/JSONL
exports), and every column that is also a CSV/JSONL column has the same name and meaning
(they are the same ``Column``). The database hands over each value ready to store (JSON as
text, times as ISO 8601 text), so rows go from a server-side cursor to SQLite's
``executemany`` in batches with no Python step per value, and memory stays flat.
"""

from __future__ import annotations

import sqlite3
import stat
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from annotation.models import Exam, Study, StudyVersion
from annotation.services.db.pgcopy import read_batches
from annotation.services.jobs import Progress, no_progress
from annotation.services.populations import not_a_test_sql

from .columns import (
    IS_ATTENTION_CHECK,
    ITEM,
    RESPONSE_ID,
    RESPONSE_TAIL,
    Column,
    exam_of,
    participant_columns,
    passage_columns,
)
from .selects import dialect, fenced_select, pseudonyms_joined, quoted, rows_written, table_names
from .spans import span_columns, span_source

READABLE = 0o644  # the archive's files unpack readable by everyone, as any download


@dataclass(frozen=True)
class Table:
    """A table of the dump: its columns and what follows ``SELECT <columns>`` (one study parameter)."""

    name: str
    description: str
    columns: list[Column]
    source: str  # FROM … WHERE <study id> = %s ORDER BY …


# Tables that other apps add after the study's own, in the order registered: ``scoring``
# adds its ``reports`` in ``ScoringConfig.ready`` (``annotation`` does not import ``scoring``).
LATER_TABLES: list[Callable[[], Table]] = []


def register_table(build: Callable[[], Table]) -> None:
    """Add a table to every SQLite export, after the study's own; ``build()`` makes it per export."""
    LATER_TABLES.append(build)


def _by_name(columns: list[Column], *names: str) -> list[Column]:
    found = {column.name: column for column in columns}
    return [found[name] for name in names]


def tables(include_platform_ids: bool, exam: Exam | None = None) -> list[Table]:
    t = table_names() | {"s": Study._meta.db_table}
    ps = dialect().pseudonyms
    participant = participant_columns(False)[0]
    tail = {column.name: column for column in RESPONSE_TAIL}
    own = [
        Table(
            "study",
            "One row: the study's settings.",
            [
                Column(
                    "study",
                    "text",
                    "s.slug",
                    "The study's slug (its address and name).",
                    sqlite_type="TEXT PRIMARY KEY",
                ),
                Column("title", "text", "s.title", "Title shown to participants."),
                Column("kind", "text", "s.kind", "Task kind (see docs/formats.md)."),
                Column("description", "text", "s.description", "One paragraph about the study."),
                Column("instructions", "text", "s.instructions", "Instructions (Markdown)."),
                Column("config", "json", "s.config", "The kind's configuration (JSON)."),
                Column("status", "text", "s.status", "draft, live or closed."),
                Column(
                    "annotations_per_item", "integer", "s.annotations_per_item", "Answers wanted per item."
                ),
                Column("items_per_session", "integer", "s.items_per_session", "Pages per participant."),
                Column(
                    "attention_check_rate",
                    "real",
                    "s.attention_check_rate",
                    "Share of pages that are checks.",
                ),
                Column("max_attention_failures", "integer", "s.max_attention_failures", "Failures allowed."),
                Column("created_at", "time", "s.created_at", "When the study was created (UTC, ISO 8601)."),
                Column("version", "integer", "s.version", "The study's latest version (see versions)."),
                Column(
                    "analysis_plan",
                    "json",
                    "s.analysis_plan",
                    "The analysis plan: populations (the first is the main one), tests, hypotheses, "
                    "stopping_rule, exclusion_rules, sample_size (JSON; docs/reproducibility.md).",
                ),
                Column("frozen_at", "time", "s.frozen_at", "When the plan was frozen; empty: not frozen."),
                Column(
                    "frozen_version", "integer", "s.frozen_version", "The version the plan was frozen with."
                ),
                Column(
                    "plan_digest",
                    "text",
                    "s.frozen_digest",
                    "SHA-256 of the study file and plan as frozen (docs/reproducibility.md says how to "
                    "check it from the versions table).",
                ),
            ],
            f"FROM {t['s']} s WHERE s.id = %s",
        ),
        Table(
            "versions",
            "Every version of the study: its study file and plan after each change, what changed, "
            "and, for a change made after the plan was frozen, the reason given (a deviation).",
            [
                Column("number", "integer", "v.number", "Version number.", sqlite_type="INTEGER PRIMARY KEY"),
                Column(
                    "study_file",
                    "json",
                    "v.study_file",
                    "The study file (docs/formats.md) without status; items only up to VERSION_ITEMS_KEPT.",
                ),
                Column("plan", "json", "v.plan", "The analysis plan then (JSON)."),
                Column("items_digest", "text", "v.items_digest", "SHA-256 of the items' study file entries."),
                Column("item_count", "integer", "v.item_count", "How many items the study had."),
                Column("digest", "text", "v.digest", "SHA-256 of the study file and plan."),
                Column("diff", "text", "v.diff", "What changed since the version before, a line each."),
                Column("source", "text", "v.source", "builder, upload, api, admin, command, job or freeze."),
                Column("deviation", "boolean", "v.deviation", "true when made after the plan was frozen."),
                Column("reason", "text", "v.reason", "The reason given for a deviation."),
                Column("created_at", "time", "v.created_at", "UTC, ISO 8601."),
            ],
            f"FROM {StudyVersion._meta.db_table} v WHERE v.study_id = %s ORDER BY v.number",
        ),
        Table(
            "items",
            "Every item of the study, with the truth and gold the participants never saw.",
            [
                replace(ITEM, sqlite_type="TEXT PRIMARY KEY"),
                replace(IS_ATTENTION_CHECK, sql="i.is_attention_check"),
                Column(
                    "payload", "json", "i.payload", "What the participant saw (JSON, the kind's payload)."
                ),
                Column("gold", "json", "i.gold", "The expected answer, when given (JSON)."),
                Column(
                    "provenance",
                    "json",
                    "i.provenance",
                    "system, model, method, decoding, seed, source_id (JSON).",
                ),
                Column(
                    "for_humans",
                    "boolean",
                    "i.for_humans",
                    "false when the study's human subset left the item to model raters (humansubset).",
                ),
                Column(
                    "human_inclusion",
                    "real",
                    "i.human_inclusion",
                    "The probability the human subset gave the item (empty without one): the weights "
                    "of the reports' prediction-powered figures.",
                ),
            ],
            f"FROM {t['i']} i WHERE i.study_id = %s ORDER BY i.id",
        ),
        Table(
            "participants",
            "Everyone enrolled in the study, under a pseudonym, with their session's figures "
            "(the same columns as in the CSV), in the order the reports number them.",
            [
                replace(participant, sqlite_type="TEXT PRIMARY KEY"),
                *participant_columns(include_platform_ids, exam)[1:],
            ],
            f"FROM {t['e']} e JOIN {t['p']} p ON p.id = e.participant_id "
            f"JOIN {ps} ps ON ps.participant_id = e.participant_id WHERE e.study_id = %s AND NOT e.is_test "
            "ORDER BY e.participant_id",  # the reports' order of participants (docs/tools/reanalyse.py)
        ),
        Table(
            "assignments",
            "Every item handed to a participant, answered or not (expired and released ones too).",
            [
                Column(
                    "assignment_id", "integer", "a.id", "Assignment id.", sqlite_type="INTEGER PRIMARY KEY"
                ),
                replace(ITEM, sqlite_type="TEXT REFERENCES items(item)"),
                replace(participant, sqlite_type="TEXT REFERENCES participants(participant)"),
                tail["position"],
                Column("status", "text", "a.status", "assigned, answered, expired or released."),
                Column("state", "json", "a.state", "What the kind recorded when handing it out (JSON)."),
                Column("assigned_at", "time", "a.assigned_at", "UTC, ISO 8601."),
                Column("expires_at", "time", "a.expires_at", "UTC, ISO 8601."),
                Column("shown_at", "time", "a.shown_at", "UTC, ISO 8601."),
                Column("answered_at", "time", "a.answered_at", "UTC, ISO 8601."),
            ],
            f"FROM {t['a']} a JOIN {t['i']} i ON i.id = a.item_id "
            f"JOIN {ps} ps ON ps.participant_id = a.participant_id WHERE a.study_id = %s "
            f"AND {not_a_test_sql('a')} ORDER BY a.id",
        ),
        Table(
            "responses",
            "One row per answer: the response columns of the CSV and JSONL exports.",
            [
                replace(RESPONSE_ID, sqlite_type="INTEGER PRIMARY KEY"),
                Column(
                    "assignment_id",
                    "integer",
                    "r.assignment_id",
                    "Its assignment.",
                    sqlite_type="INTEGER REFERENCES assignments(assignment_id)",
                ),
                replace(ITEM, sqlite_type="TEXT REFERENCES items(item)"),
                replace(participant, sqlite_type="TEXT REFERENCES participants(participant)"),
                IS_ATTENTION_CHECK,
                *[column for column in RESPONSE_TAIL if column.name != "position"],
            ],
            f"FROM {t['r']} r JOIN {t['i']} i ON i.id = r.item_id "
            f"JOIN {ps} ps ON ps.participant_id = r.participant_id WHERE r.study_id = %s "
            f"AND {not_a_test_sql('r')} ORDER BY r.id",
        ),
        Table(
            "spans",
            "One row per error span marked in an answer to a spans question (questionnaire studies "
            "only; the answer's overall score is in responses.answer).",
            [
                replace(column, sqlite_type=declared)
                for column, declared in zip(
                    span_columns(participant),
                    ["INTEGER REFERENCES responses(response_id)", "TEXT REFERENCES items(item)"],
                    strict=False,
                )
            ]
            + span_columns(participant)[2:],
            span_source(),
        ),
    ]
    return own + [build() for build in LATER_TABLES]


def write_sqlite(
    study: Study, path: Path, *, include_platform_ids: bool, progress: Progress = no_progress, archive: bool
) -> int:
    """Write the study's database to ``path`` — zipped with ``README.md`` when ``archive`` —
    and return the number of response rows."""
    chosen = [
        # a questionnaire's passage columns (``columns.passage_columns``) beside its responses
        replace(table, columns=[*table.columns, *passage_columns(study)])
        if table.name == "responses"
        else table
        for table in tables(include_platform_ids, exam_of(study))
    ]
    with tempfile.TemporaryDirectory() as work:
        database = Path(work) / f"{study.slug}.sqlite" if archive else path
        database.unlink(missing_ok=True)
        responses = _fill_database(study, database, chosen, progress)
        if archive:
            database.chmod(READABLE)  # the zip keeps the file's mode
            with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zipped:
                zipped.write(database, database.name)
                zipped.writestr(_readable_entry("README.md"), readme(study, chosen))
    return responses


def _readable_entry(name: str) -> zipfile.ZipInfo:
    """A zip entry that unpacks readable by everyone (``writestr`` by name gives 0600)."""
    entry = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
    entry.compress_type = zipfile.ZIP_DEFLATED
    entry.external_attr = (stat.S_IFREG | READABLE) << 16
    return entry


def _fill_database(study: Study, database: Path, chosen: list[Table], progress: Progress) -> int:
    """Copy each table in batches; returns the response rows written."""
    target = sqlite3.connect(database)
    try:
        target.execute("PRAGMA journal_mode = OFF")  # a new file: nothing to roll back to
        target.execute("PRAGMA synchronous = OFF")
        with pseudonyms_joined(study):
            total = _count_rows(study, chosen)
            done = responses = 0
            for table in chosen:
                written = _copy_table(target, table, study, done, total, progress)
                done += written
                responses = written if table.name == "responses" else responses
        target.commit()
    finally:
        target.close()
    return responses


def _count_rows(study: Study, chosen: list[Table]) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        parts = " + ".join(f"(SELECT count(*) {table.source.split(' ORDER BY ')[0]})" for table in chosen)
        cursor.execute(f"SELECT {parts}", [study.pk] * len(chosen))
        return cursor.fetchone()[0]


def _copy_table(target, table: Table, study: Study, done: int, total: int, progress: Progress) -> int:
    declarations = ", ".join(f"{quoted(column.name)} {column.sqlite_declaration}" for column in table.columns)
    target.execute(f"CREATE TABLE {quoted(table.name)} ({declarations})")
    insert = f"INSERT INTO {quoted(table.name)} VALUES ({', '.join('?' for _ in table.columns)})"  # noqa: S608
    sql, params = fenced_select(table.columns, "sqlite", table.source, [study.pk])
    written = 0
    for batch in read_batches(sql, params):
        target.executemany(insert, batch)
        written += len(batch)
        rows_written(progress, done + written, total, what="rows of all tables")
    return written


def readme(study: Study, chosen: list[Table]) -> str:
    """The archive's README: what each table and column holds."""
    lines = [
        f"# Export of study `{study.slug}` ({study.kind})",
        "",
        f"`{study.slug}.sqlite` is a SQLite 3 database. Open it with `sqlite3 {study.slug}.sqlite` or",
        f"`pandas.read_sql('SELECT * FROM responses', sqlite3.connect('{study.slug}.sqlite'))`.",  # noqa: S608
        "JSON values are stored as JSON text (SQLite's `json_extract` reads them); times are UTC in",
        "ISO 8601; booleans are 1/0. Participants appear only under a pseudonym: a salted hash that",
        "is the same in every export of this study and differs between studies. `item` is always the",
        "item's external_id from the study file. Columns that the CSV and JSONL exports also have",
        "carry the same name and meaning there.",
        "",
    ]
    for table in chosen:
        lines += [f"## Table `{table.name}`", "", table.description, "", "| column | type | meaning |"]
        lines.append("| --- | --- | --- |")
        lines += [f"| `{c.name}` | {c.sqlite_declaration} | {c.description} |" for c in table.columns]
        lines.append("")
    return "\n".join(lines)
