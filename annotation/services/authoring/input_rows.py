"""One row-by-row validator for every list a user sends: a study file's items, an items
upload, an import of answers, a corpus, a file of edit requests.

Every row is checked in one pass and every error is reported, none dropped after the
first few: a researcher fixing a file sees all of its problems at once. Each error is
named by the row's place (``items[3]`` in a JSON list, ``line 7`` in a JSON Lines file),
the field, and the row's own id when it has one, so it can be found either way:
``items[3].payload.sentences (external_id 'c3')``, ``line 7: answer.label (item 'c2')``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from annotation.errors import InputError
from annotation.services.web.json_input import BadJSON, read_json

T = TypeVar("T")


@dataclass(frozen=True)
class Row:
    """One row as sent, with its place; ``error`` is set when it could not even be read."""

    place: str
    value: object = None
    error: str = ""
    error_field: str = ""  # where inside the row ``error`` is, when it is known

    def path(self, field: str, label: str = "") -> str:
        """The error key of ``field`` in this row: ``items[3].payload`` in a JSON list (a path),
        ``line 7: payload`` or ``item 'c0': payload`` elsewhere."""
        if not field:
            return f"{self.place}{label}"
        separator = "." if self.place.endswith("]") else ": "
        return f"{self.place}{separator}{field}{label}"


@dataclass(frozen=True)
class Unique(Generic[T]):
    """Rows must not repeat ``key(checked row)``; the repeat is an error on ``field``."""

    field: str
    key: Callable[[T], Hashable]
    what: str = ""  # what repeats, for the message; ``field`` when empty

    def message(self, first: str) -> str:
        return f"Repeats the {self.what or self.field} of {first}."


def list_rows(values: Iterable[tuple[int, object]], name: str) -> Iterator[Row]:
    """Rows of a JSON list, from ``(index, value)`` pairs (``enumerate(items)``)."""
    for index, value in values:
        yield Row(f"{name}[{index}]", value)


def json_lines(lines: Iterable[bytes | str]) -> Iterator[Row]:
    """Rows of a JSON Lines stream, numbered from 1; blank lines are skipped, not renumbered."""
    for number, line in enumerate(lines, start=1):
        text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
        if not text.strip():
            continue
        try:
            yield Row(f"line {number}", read_json(text))
        except BadJSON as exc:
            yield Row(f"line {number}", error=exc.message, error_field=exc.path)


def collect_rows(
    rows: Iterable[Row],
    check: Callable[[Any], T],
    *,
    id_field: str | None = None,
    unique: Unique[T] | None = None,
    seen: dict[Hashable, str] | None = None,
) -> Iterator[T]:
    """Check every row with ``check`` (which raises ``InputError`` naming fields).

    Yields the checked rows while every row so far was valid, so a caller may write them
    as they come inside a transaction; after the last row, raises one ``InputError`` with
    every error of every row when there was any. ``id_field`` names the field of a sent
    row that identifies it (``external_id``); its value is added to the row's errors.
    ``seen``: the place of each ``unique`` key met before these rows (a stream checked a chunk
    at a time passes the earlier chunks' places of this chunk's keys); the keys of these rows
    are added to it.
    """
    errors: dict[str, list[str]] = {}
    first_place: dict[Hashable, str] = {} if seen is None else seen
    for row in rows:
        label = _label(row.value, id_field)
        if row.error:
            errors[row.path(row.error_field, label)] = [row.error]
            continue
        try:
            checked = check(row.value)
        except InputError as exc:
            errors.update({row.path(field, label): messages for field, messages in exc.errors.items()})
            continue
        if unique is not None:
            key = unique.key(checked)
            if key in first_place:
                errors[row.path(unique.field, label)] = [unique.message(first_place[key])]
                continue
            first_place[key] = row.place
        if not errors:
            yield checked
    if errors:
        raise InputError(errors)


def read_jsonl_file(
    path: str | Path,
    check: Callable[[Any], T],
    *,
    parameter: str,
    what: str,
    id_field: str,
    unique_by: Callable[[T], Hashable],
) -> list[T]:
    """Every record of a JSON Lines file on the workers (a corpus, edit requests, questions),
    each checked by ``check``, ids unique; any bad line rejects the file with every error.
    Errors about the file itself name the job's ``parameter`` that gave its path; ``what``
    names the records ("documents") for an empty file."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, IsADirectoryError):
        raise InputError({parameter: [f"{path}: no such file."]}) from None
    except UnicodeDecodeError:
        raise InputError({parameter: [f"{path}: not UTF-8 text."]}) from None
    once = Unique(id_field, key=unique_by)
    records = list(collect_rows(json_lines(lines), check, id_field=id_field, unique=once))
    if not records:
        raise InputError({parameter: [f"{path}: no {what} in the file."]})
    return records


def _label(value: object, id_field: str | None) -> str:
    if id_field is None or not isinstance(value, dict):
        return ""
    row_id = value.get(id_field)
    if isinstance(row_id, (str, int)) and not isinstance(row_id, bool) and str(row_id).strip():
        return f" ({id_field} {str(row_id)[:200]!r})"
    return ""
