"""Items into a study, any number of them, in bounded memory: the one writer of items.

Every way items arrive (``loaditems`` and the builder's items file, the API's items upload,
a study file) ends here. A stream of rows is read a chunk at a time (``CHUNK_ROWS``): each
chunk's rows are checked by the caller's check (the study's kind, ``validation.check_item``),
the ids it repeats are looked up among the earlier chunks' in a temporary table of this
load's ids, the study's items with its ids are read, and, while no row so far was bad, the
chunk is written: new items by COPY, changed ones updated. One transaction holds it all, so
a bad row anywhere writes nothing (all or nothing, as before), and every bad row is listed
by its place and field, the first ``MAX_LISTED_ERRORS`` of them with a count of the rest.
Memory holds one chunk, whatever the number of rows; no query has more parameters than a
chunk has ids (PostgreSQL's limit is 65,535: a 100,000-item file once failed there).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice

from django.db import connection, transaction
from psycopg import sql

from annotation.errors import InputError
from annotation.models import Item, Study
from annotation.serializer_reuse import reused_serializers
from annotation.services.db.pgcopy import copy_from, insert_like

from .human_subset import item_inclusion, study_design
from .input_rows import Row, Unique, collect_rows
from .versions import record_study_version

CHUNK_ROWS = 5000
MAX_LISTED_ERRORS = 1000
WRITTEN = [
    "payload",
    "is_attention_check",
    "gold",
    "provenance",
    "explanation",
    "for_humans",
    "human_inclusion",
]
ONCE: Unique[dict] = Unique("external_id", key=lambda item: item["external_id"])

# A check of one row's value for a chunk, given the ids of the chunk the study already has
# (``loaditems`` refuses those; an upload updates them, its check ignores them).
CheckFor = Callable[[set[str]], Callable[[object], dict]]


@dataclass(frozen=True)
class Loaded:
    added: int
    updated: int


def load_rows(
    study: Study,
    rows: Iterable[Row],
    check_for: CheckFor,
    *,
    first_errors: dict[str, list[str]] | None = None,
    empty: str = "No items in the file.",
    source: str = "job",
    user=None,
    reason: str = "",
) -> Loaded:
    """Check and write ``rows`` into ``study``, a chunk at a time, all or nothing.

    ``first_errors``: errors found before the rows (a CSV header's), listed first; with any,
    nothing is written. ``empty``: the error on ``file`` when there is no row. Raises
    ``InputError`` with every error (capped), having written nothing. The study row is
    locked meanwhile: two loads into one study take turns. The items loaded are a new
    version of the study (``versions.record_study_version``, by ``user`` through ``source``;
    a frozen study's only with ``reason``).
    """
    errors = _Errors(dict(first_errors or {}))
    added = updated = 0
    any_row = False
    with transaction.atomic(), reused_serializers():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        ledger = _IdLedger.create()
        for chunk in _chunks(rows, CHUNK_ROWS):
            any_row = True
            items, existing = _checked_chunk(study, chunk, check_for, ledger, errors)
            if not errors:
                made, changed = write_chunk(study, items, existing)
                added, updated = added + made, updated + changed
        if not any_row and not errors:
            errors.add({"file": [empty]})
        if errors:
            raise InputError(errors.listed())
        ledger.drop()
        record_study_version(study, user=user, source=source, reason=reason)
    return Loaded(added=added, updated=updated)


def write_items(study: Study, items: list[dict]) -> tuple[int, int]:
    """Checked items (a study file's) written, a chunk at a time; returns (added, updated)."""
    added = updated = 0
    for start in range(0, len(items), CHUNK_ROWS):
        chunk = items[start : start + CHUNK_ROWS]
        made, changed = write_chunk(study, chunk, _existing(study, [item["external_id"] for item in chunk]))
        added, updated = added + made, updated + changed
    return added, updated


def known_ids(study: Study, ids: list) -> set[str]:
    """Which of ``ids`` the study has, looked up a chunk at a time."""
    texts = [value for value in ids if isinstance(value, str)]
    known: set[str] = set()
    for start in range(0, len(texts), CHUNK_ROWS):
        chunk = texts[start : start + CHUNK_ROWS]
        found = Item.objects.filter(study=study, external_id__in=chunk).values_list("external_id", flat=True)
        known.update(found)
    return known


def write_chunk(study: Study, items: list[dict], existing: dict[str, Item]) -> tuple[int, int]:
    """Add the new ``items``, update the changed ones (``existing``: the study's items with
    these ids, by id); returns (added, updated). Each is drawn into the study's human
    subset, or not, by its id and system (``human_subset.item_inclusion``)."""
    new, changed = [], []
    design = study_design(study)
    for data in items:
        ordinary = design if not data["attention_check"] else None
        for_humans, inclusion = item_inclusion(ordinary, data["external_id"], data["provenance"])
        values = {
            "payload": data["payload"],
            "is_attention_check": data["attention_check"],
            "gold": data["gold"],
            "provenance": data["provenance"],
            "explanation": data.get("explanation", ""),
            "for_humans": for_humans,
            "human_inclusion": inclusion,
        }
        item = existing.get(data["external_id"])
        if item is None:
            new.append((data["external_id"], *values.values()))
        elif any(getattr(item, k) != v for k, v in values.items()):
            for key, value in values.items():
                setattr(item, key, value)
            changed.append(item)
    insert_like(Item(study=study), ("external_id", *WRITTEN), new)
    Item.objects.bulk_update(changed, WRITTEN, batch_size=1000)
    return len(new), len(changed)


def _checked_chunk(
    study: Study, chunk: list[Row], check_for: CheckFor, ledger: _IdLedger, errors: _Errors
) -> tuple[list[dict], dict[str, Item]]:
    """The chunk's rows checked (its errors added to ``errors``), and the study's items with
    its ids; a repeat of an earlier chunk's id is named by that id's first place."""
    ids = _sent_ids(chunk)
    existing = _existing(study, ids)
    seen: dict[Hashable, str] = dict(ledger.places(ids))
    before = set(seen)
    known = set(existing) - before  # the study's before this load (an earlier chunk's are repeats)
    items: list[dict] = []
    try:
        items = list(collect_rows(chunk, check_for(known), id_field="external_id", unique=ONCE, seen=seen))
    except InputError as exc:
        errors.add(exc.errors)
    ledger.add([(str(key), place) for key, place in seen.items() if key not in before])
    return items, existing


def _chunks(rows: Iterable[Row], size: int) -> Iterator[list[Row]]:
    iterator = iter(rows)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _sent_ids(chunk: list[Row]) -> list[str]:
    """The ids the rows send, as the item check will read them (text, trimmed)."""
    ids = []
    for row in chunk:
        value = row.value.get("external_id") if isinstance(row.value, dict) else None
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            ids.append(str(value).strip())
    return ids


def _existing(study: Study, ids: list[str]) -> dict[str, Item]:
    if not ids:
        return {}
    return {item.external_id: item for item in Item.objects.filter(study=study, external_id__in=set(ids))}


@dataclass
class _Errors:
    """Every row's errors in row order, the first ``MAX_LISTED_ERRORS`` kept, the rest counted."""

    kept: dict[str, list[str]] = field(default_factory=dict)
    more: int = 0

    def add(self, errors: dict[str, list[str]]) -> None:
        for path, messages in errors.items():
            if len(self.kept) < MAX_LISTED_ERRORS:
                self.kept[path] = messages
            else:
                self.more += 1

    def __bool__(self) -> bool:
        return bool(self.kept)

    def listed(self) -> dict[str, list[str]]:
        if not self.more:
            return self.kept
        note = f"{self.more} more errors not listed (the first {MAX_LISTED_ERRORS} are); nothing was written."
        return {**self.kept, "file": [note]}


@dataclass(frozen=True)
class _IdLedger:
    """This load's ids with the place each first came at, in a temporary table: the ids of
    a million rows stay in the database, not in the process."""

    table: str

    def _sql(self, template: str, marks: sql.Composable | None = None) -> str:
        """``template`` with this ledger's table (quoted) and ``marks`` (placeholders) in place."""
        parts = {"table": sql.Identifier(self.table), "marks": marks or sql.SQL("")}
        return sql.SQL(template).format(**parts).as_string(None)

    @classmethod
    def create(cls) -> _IdLedger:
        ledger = cls(f"item_load_ids_{uuid.uuid4().hex}")
        with connection.cursor() as cursor:
            cursor.execute(
                ledger._sql("CREATE TEMPORARY TABLE {table} (external_id text PRIMARY KEY, place text)")
            )
        return ledger

    def places(self, ids: list[str]) -> list[tuple[str, str]]:
        """(id, first place) of each of ``ids`` an earlier chunk had."""
        if not ids:
            return []
        distinct = list(set(ids))
        marks = sql.SQL(", ").join(sql.Placeholder() * len(distinct))
        with connection.cursor() as cursor:
            cursor.execute(
                self._sql("SELECT external_id, place FROM {table} WHERE external_id IN ({marks})", marks),
                distinct,
            )
            return cursor.fetchall()

    def add(self, places: list[tuple[str, str]]) -> None:
        if not places:
            return
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                copy_from(cursor, self.table, ["external_id", "place"], places)
            else:
                cursor.executemany(self._sql("INSERT INTO {table} VALUES (%s, %s)"), places)

    def drop(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(self._sql("DROP TABLE {table}"))
