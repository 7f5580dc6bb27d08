"""A study as a dataset release in the Hugging Face datasets layout: a zip of ``README.md``
(the dataset card) and ``data/<table>.parquet``, one Parquet file per table of the SQLite
export (``sqlite.tables``: the same columns, the same pseudonyms, the same rows).

After unzipping, ``datasets.load_dataset("parquet", data_files="data/responses.parquet")``
reads a table offline, and ``datasets.load_dataset("<folder>", "<table>")`` reads it by the
card's ``configs``. Rows go from the database to Parquet a batch at a time (one row group a
batch), so memory stays flat. The card's body is the study's datasheet, which ``scoring``
writes (``register_card``: ``annotation`` does not import ``scoring``); without one, the
card lists the tables and columns alone.
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from annotation.models import Study
from annotation.services.db.pgcopy import read_batches
from annotation.services.jobs import Progress, no_progress

from .columns import Column, exam_of
from .selects import fenced_select, pseudonyms_joined, rows_written
from .sqlite import Table, tables

ARROW_TYPES = {"integer": pa.int64(), "real": pa.float64(), "boolean": pa.bool_()}  # others: text
DEFAULT_TABLE = "responses"
# ``scoring`` registers the datasheet's Markdown as the card's body (``ScoringConfig.ready``).
CARD_BODIES: list[Callable[[Study], str]] = []


def register_card(build: Callable[[Study], str]) -> None:
    CARD_BODIES.append(build)


def write_dataset(study: Study, path: Path, *, progress: Progress = no_progress) -> int:
    """Write the study's dataset release (a zip) to ``path``; returns the response rows."""
    chosen = tables(False, exam_of(study))  # pseudonyms only: a release never holds platform ids
    responses = 0
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        (folder / "data").mkdir()
        with pseudonyms_joined(study):
            for table in chosen:
                written = _write_table(study, table, folder / "data" / f"{table.name}.parquet", progress)
                responses = written if table.name == DEFAULT_TABLE else responses
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zipped:
            zipped.writestr("README.md", dataset_card(study, chosen))
            for table in chosen:
                zipped.write(folder / "data" / f"{table.name}.parquet", f"data/{table.name}.parquet")
    return responses


def arrow_schema(columns: list[Column]) -> pa.Schema:
    return pa.schema([pa.field(column.name, ARROW_TYPES.get(column.type, pa.string())) for column in columns])


def _write_table(study: Study, table: Table, path: Path, progress: Progress) -> int:
    """The table's rows as the SQLite export reads them (JSON as text, times as ISO 8601
    text, booleans as 1/0), each batch a row group of typed columns."""
    schema = arrow_schema(table.columns)
    sql, params = fenced_select(table.columns, "sqlite", table.source, [study.pk])
    written = 0
    with pq.ParquetWriter(path, schema) as writer:
        for batch in read_batches(sql, params):
            values = list(zip(*batch, strict=True)) if batch else [() for _ in table.columns]
            arrays = [
                pa.array([None if v is None else bool(v) for v in column], pa.bool_())
                if field.type == pa.bool_()
                else pa.array(column, field.type)
                for field, column in zip(schema, values, strict=True)
            ]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
            written += len(batch)
            rows_written(progress, written, written, what=f"rows of {table.name}")
        if not written:
            writer.write_table(schema.empty_table())
    return written


def dataset_card(study: Study, chosen: list[Table]) -> str:
    """The dataset card: YAML front matter naming each table as a config (the responses the
    default), then the datasheet (when ``scoring`` provides one) and the columns."""
    front = ["---", f"pretty_name: {_yaml_text(study.title)}", f"language:\n- {study.language}", "configs:"]
    for table in chosen:
        front.append(f"- config_name: {table.name}")
        front.append(f"  data_files: data/{table.name}.parquet")
        if table.name == DEFAULT_TABLE:
            front.append("  default: true")
    front.append("---")
    body = [
        f"# {study.title} (`{study.slug}`)",
        "",
        "A human evaluation study exported as a dataset: one Parquet file per table under `data/`. "
        'Read one offline with `datasets.load_dataset("parquet", data_files="data/responses.parquet")`. '
        "Participants appear only under a per-study pseudonym, as in the study's other exports.",
        "",
    ]
    for build in CARD_BODIES:
        sheet = build(study).strip().splitlines()
        body += ["#" + line if line.startswith("#") else line for line in sheet] + [""]  # one level down
    body += ["## Tables", ""]
    for table in chosen:
        body += [
            f"### `{table.name}`",
            "",
            table.description,
            "",
            "| column | type | meaning |",
            "| --- | --- | --- |",
        ]
        body += [f"| `{c.name}` | {c.type} | {c.description} |" for c in table.columns]
        body.append("")
    return "\n".join(front + body)


def _yaml_text(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is a subset of it)."""
    return json.dumps(text, ensure_ascii=False)
