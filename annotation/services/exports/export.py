"""Exporting a study: CSV and JSONL (one row per response) and a standalone SQLite dump.

The ``export`` job, the ``exportstudy`` command and the tests all call ``export_study``:
one code path. Files are written next to their final name and renamed when complete, so a
half-written export is never offered for download.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection
from rest_framework import serializers

from annotation.errors import InputError
from annotation.models import Job, Study
from annotation.services.access import can_see_platform_ids
from annotation.services.jobs import JobParameters, Progress, no_progress
from annotation.services.populations import real_answers

from .columns import Column, response_columns
from .dataset import write_dataset
from .selects import copy_csv_rows, copy_jsonl_rows, rows_written, stream_rows
from .sqlite import write_sqlite

# format → the export job's file extension; ``dataset``: Parquet and a dataset card (``dataset``)
FORMATS = {"csv": "csv", "jsonl": "jsonl", "sqlite": "zip", "dataset": "zip"}
PROGRESS_EVERY = 20_000
DATASET_PSEUDONYMS_ONLY = "A dataset release holds pseudonyms only: it is made to be shared."
__all__ = ["FILE_DELETED", "FORMATS", "ExportParameters", "ExportResult", "export_path", "export_study"]


@dataclass(frozen=True, kw_only=True)
class ExportParameters(JobParameters):
    """Parameters of the ``export`` job kind."""

    format: str  # one of FORMATS
    include_platform_ids: bool

    class Serializer(serializers.Serializer):
        format = serializers.ChoiceField(choices=list(FORMATS))
        include_platform_ids = serializers.BooleanField(
            default=False,
            help_text="Owner and admins only: add the raw crowd-platform ids (otherwise pseudonyms only).",
        )

        def validate(self, data):
            if data.get("format") == "dataset" and data.get("include_platform_ids"):
                raise serializers.ValidationError({"include_platform_ids": [DATASET_PSEUDONYMS_ONLY]})
            return data


@dataclass(frozen=True)
class ExportResult:
    path: Path
    rows: int
    bytes: int


def check_export_request(user, study: Study | None, *, include_platform_ids: bool) -> None:
    """Raw platform ids leave the server only for those who may see them
    (``access.can_see_platform_ids``: the study's owner and admins)."""
    if include_platform_ids and not can_see_platform_ids(user, study):
        raise InputError(
            {"include_platform_ids": ["Only the study's owner or an admin may include crowd-platform ids."]}
        )


def export_study(
    study: Study,
    *,
    fmt: str,
    path: Path,
    include_platform_ids: bool = False,
    progress: Progress = no_progress,
    use_copy: bool | None = None,
) -> ExportResult:
    """Write the study's export in ``fmt`` to ``path``; return what was written.

    ``sqlite`` writes the database itself, or a zip of it with its README when ``path``
    ends in ``.zip`` (the export job's file). ``use_copy`` (PostgreSQL only, the default
    there) lets the database write CSV and JSONL itself; without it Python writes the same
    rows (SQLite; the tests compare the two)."""
    if fmt not in FORMATS:
        raise InputError({"format": [f"Unknown format {fmt!r}; use one of {', '.join(FORMATS)}."]})
    use_copy = connection.vendor == "postgresql" and use_copy is not False
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    try:
        if fmt == "sqlite":
            rows = write_sqlite(
                study,
                partial,
                include_platform_ids=include_platform_ids,
                progress=progress,
                archive=path.suffix.lower() == ".zip",
            )
        elif fmt == "dataset":
            if include_platform_ids:
                raise InputError({"include_platform_ids": [DATASET_PSEUDONYMS_ONLY]})
            rows = write_dataset(study, partial, progress=progress)
        else:
            rows = _write_rows(study, fmt, partial, include_platform_ids, progress, use_copy)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return ExportResult(path=path, rows=rows, bytes=path.stat().st_size)


def export_path(job: Job) -> Path:
    """Where an export job writes its file (web and workers share EXPORT_DIR)."""
    extension = FORMATS[job.parameters["format"]]
    if job.study is None:
        raise ValueError(f"Job {job.pk} is not an export: it has no study.")
    return Path(settings.EXPORT_DIR) / job.study.slug / f"{job.study.slug}-export-{job.pk}.{extension}"


# Why an export's file can be missing (``services.authoring.erasure`` deletes the files of
# the exports made before an erasure: they held the participant).
FILE_DELETED = "This export's file was deleted when a participant was erased; start a new export."


def _write_rows(study, fmt: str, path: Path, include_platform_ids: bool, progress, use_copy: bool) -> int:
    columns = response_columns(study, include_platform_ids=include_platform_ids)
    if use_copy:
        with open(path, "wb") as out:
            if fmt == "jsonl":
                return copy_jsonl_rows(study, columns, out, progress=progress)
            header = io.StringIO()
            csv.writer(header, lineterminator="\n").writerow([column.name for column in columns])
            out.write(header.getvalue().encode())
            return copy_csv_rows(study, columns, out, progress=progress)
    total = real_answers(study).count()
    rows = stream_rows(study, columns, "csv" if fmt == "csv" else "json_text")
    with open(path, "w", encoding="utf-8", newline="") as out:
        return (_write_csv if fmt == "csv" else _write_jsonl)(columns, rows, total, out, progress)


def _write_csv(columns: list[Column], rows: Iterable[tuple], total: int, out, progress: Progress) -> int:
    """Rows as the database gave them for the ``csv`` target (text already neutralised
    there), quoted by PostgreSQL's CSV rules so that both paths write the same file: a
    NULL is an empty cell, an empty text is ``""``, and a cell with a comma, a quote or a
    line break (``\\r`` too, which Python's csv module leaves bare) is quoted."""
    out.write(",".join(_csv_cell(column.name) for column in columns) + "\n")
    count = 0
    for row in rows:
        out.write(",".join(_csv_cell(value) for value in row) + "\n")
        count += 1
        if count % PROGRESS_EVERY == 0:
            rows_written(progress, count, total)
    rows_written(progress, count, total)
    return count


def _csv_cell(value) -> str:
    if value is None:
        return ""
    text = str(value)
    if text == "" or any(char in text for char in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _write_jsonl(columns: list[Column], rows: Iterable[tuple], total: int, out, progress: Progress) -> int:
    encode = json.JSONEncoder(ensure_ascii=False).encode
    keys = [encode(column.name) + ": " for column in columns]
    raw = [column.type in ("boolean", "json", "field") for column in columns]
    count = 0
    for row in rows:
        parts = []
        for key, is_json, value in zip(keys, raw, row, strict=True):
            if value is None:
                parts.append(key + "null")
            else:
                parts.append(key + (value if is_json else encode(value)))
        out.write("{" + ", ".join(parts) + "}\n")
        count += 1
        if count % PROGRESS_EVERY == 0:
            rows_written(progress, count, total)
    rows_written(progress, count, total)
    return count
