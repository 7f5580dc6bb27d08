"""Adding items to an existing study from a file: CSV (a spreadsheet's export) or JSON Lines.

``manage.py loaditems`` reads the file; the builder's upload will send the same bytes. Every
row is mapped and checked by the study's kind before anything is written, and every error of
every row is reported at once, named by the file's line and the field (a CSV column where the
error is in one: ``line 4: passage.a.text (external_id 'q3')``). A file that adds an id the
study already has, or repeats one, is refused: this adds items, it never changes one (a study
file with ``--update``, or the API's items upload, does that).

The CSV columns (docs/formats.md, "Items file"): ``external_id`` (or ``id``), the item fields
of a study file as cells (``payload``, ``gold`` and ``provenance`` hold JSON), and for a
questionnaire study ``context`` and ``passage.<id>.text`` / ``passage.<id>.system``, which
spell ``payload.context`` and ``payload.passages`` without JSON.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from annotation.errors import InputError
from annotation.kinds.base import TaskKind
from annotation.models import Study
from annotation.services.web.json_input import BadJSON, read_json

from .input_rows import Row, Unique, collect_rows, json_lines
from .item_load import load_rows
from .validation import check_item, is_exam

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
JSON_COLUMNS = ("payload", "gold", "provenance")  # a JSON object per cell
TEXT_COLUMNS = ("external_id", "attention_check", "explanation")  # a cell as it is
# A spreadsheet's natural names for the id column (the builder's column table also reads
# them in any case: ``ID``, ``Item_ID``; U24).
ALIASES = {"id": "external_id", "item_id": "external_id"}
PASSAGE_COLUMN = re.compile(r"passage\.(?P<id>[^.]+)\.(?P<part>text|system)")
PASSAGE_ERROR = re.compile(r"payload\.passages(?:\.|\[)(?P<index>\d+)\]?(?:\.(?P<field>\w+))?")
ALREADY_THERE = "The study already has an item with this id."
IGNORED = "column (not read)"  # a column a mapping leaves out (named so no field matches it)


@dataclass(frozen=True)
class ItemFileResult:
    added: int


def format_of(name: str) -> str:
    """``csv`` or ``jsonl`` by the file name's ending; ``InputError`` on ``file`` otherwise."""
    found = FORMATS.get(Path(name).suffix.lower())
    if found is None:
        raise InputError({"file": [f"{name}: expected a .csv or .jsonl file."]})
    return found


def add_items_from_file(
    study: Study,
    source: bytes | BinaryIO,
    *,
    file_format: str,
    columns: ColumnMap | None = None,
    via: str = "command",
    user=None,
    reason: str = "",
) -> ItemFileResult:
    """Add the items of a CSV or JSONL file (its bytes, or a binary file read as it goes) to
    ``study``: all of them, or none and an ``InputError`` naming every problem. A live study
    takes new items too, as ``add_items`` and the API upload let it (new items only widen
    what participants may be shown). ``columns``: a CSV's own column names mapped to ours
    (``column_map``). Read and written a chunk of rows at a time (``item_load``): a million
    rows in bounded memory."""
    kind, config, exam = study.task_kind, study.config, is_exam(study)
    with _utf8(source):
        reading = _reading(_text(source, file_format), file_format, columns)
        loaded = load_rows(
            study,
            reading.rows,
            lambda known: _item_check(kind, config, reading, known=known, exam=exam),
            first_errors=reading.header_errors,
            source=via,
            user=user,
            reason=reason,
        )
    return ItemFileResult(added=loaded.added)


def read_items(
    kind: TaskKind,
    config: dict,
    content: bytes,
    *,
    file_format: str,
    columns: ColumnMap | None = None,
    exam: bool = False,
) -> list[dict]:
    """The items of a CSV or JSONL file, each checked by ``kind`` under ``config`` as a
    study file's item would be, for a study being made (the builder: its study file)."""
    with _utf8(content):
        reading = _reading(_text(content, file_format), file_format, columns)
        items = _collected(reading, _item_check(kind, config, reading, known=frozenset(), exam=exam))
    if not items:
        raise InputError({"file": ["No items in the file."]})
    return items


def _item_check(
    kind: TaskKind, config: dict, reading: _Reading, *, known: set[str] | frozenset[str], exam: bool
) -> Callable[[object], dict]:
    """One row's check: the item it spells, checked by ``kind`` (``check_item``); an id in
    ``known`` (the study has it) is refused."""

    def check(value) -> dict:
        sent, errors, rename = reading.to_item(value)
        sent_id = sent.get("external_id") if isinstance(sent, dict) else None
        if isinstance(sent_id, str) and sent_id.strip() in known:  # stored trimmed
            errors.setdefault("external_id", [ALREADY_THERE])
        try:
            item = check_item(kind, config, sent, exam=exam)
        except InputError as exc:
            errors = {**{rename(path): messages for path, messages in exc.errors.items()}, **errors}
        if errors:
            raise InputError(errors)
        return item

    return check


@contextmanager
def _utf8(source) -> Iterator[None]:
    """A file that is not UTF-8 (found wherever its first bad byte is) is an error on ``file``."""
    try:
        yield
    except UnicodeDecodeError:
        raise InputError({"file": ["Not UTF-8 text."]}) from None


def _text(source: bytes | BinaryIO, file_format: str) -> TextIO:
    """The file as text, decoded as it is read; a CSV's line ends as the csv module wants
    them, a JSON Lines file's split at ``\\n`` only. Excel's "CSV UTF-8" starts with a BOM."""
    binary = io.BytesIO(source) if isinstance(source, bytes) else source
    return io.TextIOWrapper(binary, encoding="utf-8-sig", newline="" if file_format == "csv" else "\n")


def _reading(text: TextIO, file_format: str, columns: ColumnMap | None) -> _Reading:
    if file_format == "csv":
        return _csv_reading(text, columns)
    return _Reading(rows=json_lines(text), to_item=_as_sent)


def decoded(content: bytes) -> str:
    """A file's text; Excel's "CSV UTF-8" starts with a byte order mark."""
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError({"file": ["Not UTF-8 text."]}) from None


def csv_header(content: bytes) -> list[str]:
    """A CSV file's column names as its first line spells them (the builder shows them to
    be mapped); ``InputError`` on ``file`` when there is no header."""
    try:
        header = next(csv.reader(io.StringIO(decoded(content), newline="")), [])
    except csv.Error as exc:
        raise InputError({"line 1": [f"Not a CSV header: {exc}."]}) from None
    names = [name.strip() for name in header]
    if not any(names):
        raise InputError({"file": ["No items in the file."]})
    return names


# A CSV's own column names → ours (``external_id``, ``context``, ``passage.<id>.text``, …);
# a column the map leaves out is not read.
ColumnMap = dict[str, str]


def _collected(reading: _Reading, check: Callable[[object], dict]) -> list[dict]:
    """Every row checked, ids not repeated; the header's errors (a CSV's) with the rows'."""
    once: Unique[dict] = Unique("external_id", key=lambda item: item["external_id"])
    try:
        items = list(collect_rows(reading.rows, check, id_field="external_id", unique=once))
    except InputError as exc:
        raise InputError({**reading.header_errors, **exc.errors}) from None
    if reading.header_errors:
        raise InputError(reading.header_errors)
    return items


# What a row becomes: the item as a study file would hold it, the errors of cells that could
# not be read (by field), and how an error path of the item is named in the file.
Mapped = tuple[object, dict[str, list[str]], Callable[[str], str]]


@dataclass(frozen=True)
class _Reading:
    rows: Iterator[Row]
    to_item: Callable[[object], Mapped]
    header_errors: dict[str, list[str]] = field(default_factory=dict)


def _as_sent(value: object) -> Mapped:
    """A JSON Lines row is an item already; its errors are named as the kind names them."""
    return value, {}, lambda path: path


def _csv_reading(text: TextIO, mapping: ColumnMap | None = None) -> _Reading:
    reader = csv.reader(text)
    try:
        header = [name.strip() for name in next(reader, [])]
    except csv.Error as exc:
        raise InputError({"line 1": [f"Not a CSV header: {exc}."]}) from None
    if not any(header):
        raise InputError({"file": ["No items in the file."]})
    if mapping is not None:
        header = [mapping.get(name, IGNORED) if name else name for name in header]
    columns = [ALIASES.get(name, name) for name in header]
    errors = _header_errors(header, columns)
    if "external_id" not in columns:
        errors["line 1: external_id"] = ["The file needs an external_id (or id) column."]
        raise InputError(errors)
    passages = list(dict.fromkeys(m["id"] for name in columns if (m := PASSAGE_COLUMN.fullmatch(name))))
    spelled_out = bool(passages) or "context" in columns  # the payload in columns, not JSON
    return _Reading(
        rows=_csv_rows(reader, columns),
        to_item=lambda cells: _csv_item(cells, passages, spelled_out=spelled_out),
        header_errors=errors,
    )


def _header_errors(header: list[str], columns: list[str]) -> dict[str, list[str]]:
    """Each column the header should not have, named as the header spells it."""
    errors: dict[str, list[str]] = {}
    allowed = (*JSON_COLUMNS, *TEXT_COLUMNS, "context")
    for name, column in zip(header, columns, strict=True):
        if column == IGNORED:
            continue
        if column and column not in allowed and not PASSAGE_COLUMN.fullmatch(column):
            errors[f"line 1: {name}"] = [
                "Unknown column; the columns are external_id (or id), payload, attention_check, gold, "
                "provenance, explanation, and for a questionnaire context, passage.<id>.text and "
                "passage.<id>.system."
            ]
        elif column and columns.count(column) > 1:
            errors[f"line 1: {name}"] = ["This column is in the header more than once."]
    for column in columns:
        match = PASSAGE_COLUMN.fullmatch(column)
        if match and match["part"] == "system" and f"passage.{match['id']}.text" not in columns:
            errors[f"line 1: {column}"] = [f"A passage's system needs its text: passage.{match['id']}.text."]
    if "payload" in columns and any(c == "context" or PASSAGE_COLUMN.fullmatch(c) for c in columns):
        errors["line 1: payload"] = ["Give the payload as JSON or as context and passage columns, not both."]
    return errors


def _csv_rows(reader, columns: list[str]) -> Iterator[Row]:
    """A row per record, placed at the line it starts on (a quoted cell may hold line breaks);
    its cells by column, extra cells under ``column N``; blank records are skipped."""
    ends_at = reader.line_num
    while True:
        starts_at = ends_at + 1
        try:
            record = next(reader, None)
        except csv.Error as exc:
            yield Row(f"line {starts_at}", error=f"Not CSV: {exc}.")
            return
        if record is None:
            return
        ends_at = reader.line_num
        if not any(cell.strip() for cell in record):
            continue
        named = [*columns, *[""] * (len(record) - len(columns))][: len(record)]
        pairs = enumerate(zip(named, record, strict=True), start=1)
        cells = {name or f"column {number}": cell for number, (name, cell) in pairs}
        yield Row(f"line {starts_at}", cells)


def _csv_item(cells: Any, passages: list[str], *, spelled_out: bool) -> Mapped:
    """The item a CSV row spells (``cells``: a ``_csv_rows`` value, by column); cells that
    cannot be read are errors on their column."""
    errors: dict[str, list[str]] = {}
    item: dict[str, object] = {}
    for name, cell in cells.items():
        if name.startswith("column ") and cell.strip() and name != IGNORED:
            errors[name] = ["A cell outside the header's columns."]
    for name in TEXT_COLUMNS:
        if cells.get(name, "") != "":  # an empty cell: the field's default
            item[name] = cells[name]
    for name in JSON_COLUMNS:
        if cells.get(name, "").strip():
            try:
                item[name] = read_json(cells[name])
            except BadJSON as exc:
                errors[name] = [exc.message]
    shown: list[str] = []  # the passages this row has, in order
    if spelled_out:
        listed: list[dict[str, str]] = []
        for pid in passages:
            text, system = cells.get(f"passage.{pid}.text", ""), cells.get(f"passage.{pid}.system", "")
            if text == "" and system == "":
                continue  # this item has fewer passages than the file has columns for
            listed.append({"id": pid, "text": text, **({"system": system} if system else {})})
            shown.append(pid)
        context = cells.get("context", "")
        item["payload"] = {"passages": listed, **({"context": context} if context else {})}
    return item, errors, lambda path: _column_of(path, shown)


def _column_of(path: str, passages: list[str]) -> str:
    """An item's error path as the CSV column it comes from (``payload.passages[1].text`` or,
    as a list field keys them, ``payload.passages.1.text`` → ``passage.b.text``); paths
    without a column of their own are kept."""
    if path == "payload.context":
        return "context"
    if path == "payload.passages":
        return "passage columns"
    match = PASSAGE_ERROR.fullmatch(path)
    if match and int(match["index"]) < len(passages):
        return f"passage.{passages[int(match['index'])]}.{match['field'] or 'text'}"
    return path
