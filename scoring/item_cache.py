"""A study's item columns for its reports, cached per item version (``ItemColumns``).

Items change rarely and the reports read the same fields of them every run, decoding
each item's JSON (boundary, labels, provenance) again. On PostgreSQL the columns are
kept as one compressed ``.npz`` blob beside the study's item version, which triggers bump
on every item insert, delete and update except of ``slots_taken`` (migration 0003). A
read inside the reports' snapshot uses the blob when it was stored at the version that
snapshot sees; otherwise it reads the items and stores the blob only if no item changed
since the snapshot began: the version row is locked without waiting, so a writer still
in progress, or one that committed after the snapshot (a serialisation failure under
repeatable read, or a newer version under read committed), means no store. A stale blob
is never stored, only sometimes a fresh one not. Elsewhere (SQLite) nothing is cached.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import numpy as np
from django.db import DatabaseError, connection, transaction

from annotation.models import Study
from scoring.models import ItemColumns
from scoring.reports.base import Columns, Field
from stats.groups import factorize

# The prefix of the stored labels of a text column (its values are codes into them).
LABELS = "labels:"


def cached_item_columns(study: Study, fields: dict[str, Field], read: Callable[[], Columns]) -> Columns:
    """The item columns ``read`` returns for ``fields``, from the cache when it holds the
    version the current snapshot sees (call inside the reports' snapshot)."""
    if connection.vendor != "postgresql":
        return read()
    signature = fields_signature(fields)
    state = ItemColumns.objects.filter(study=study).values_list("version", "blob_version", "fields").first()
    if state is None:  # a study without items (or its row lost): nothing to keep in step
        return read()
    version, blob_version, stored = state
    if blob_version == version and stored == signature:
        blob = ItemColumns.objects.filter(study=study).values_list("blob", flat=True).first()
        if blob is not None:
            return decode(bytes(blob))
    columns = read()
    _store(study, version, signature, columns)
    return columns


def fields_signature(fields: dict[str, Field]) -> str:
    """What a blob holds: the fields by name, lookup path and type, in order."""
    return json.dumps([[name, field.path, field.type] for name, field in fields.items()])


def _store(study: Study, version: int, signature: str, columns: Columns) -> None:
    """Store the blob at ``version`` unless an item changed since it was read."""
    blob = encode(columns)
    try:
        with transaction.atomic():  # a savepoint: a refused lock leaves the snapshot usable
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT version FROM scoring_itemcolumns WHERE study_id = %s FOR UPDATE NOWAIT",
                    [study.pk],
                )
                found = cursor.fetchone()
            if found is None or found[0] != version:
                return
            # bumped_by reset: this transaction's next item change bumps the version again
            ItemColumns.objects.filter(study=study).update(
                blob=blob, blob_version=version, fields=signature, bumped_by=0
            )
    except DatabaseError:  # locked by a writer, or changed after the snapshot: read again next time
        return


def encode(columns: Columns) -> bytes:
    """Columns → compressed ``.npz`` bytes: arrays as they are, text (object arrays of
    str) as codes into its sorted labels, so no pickle is needed to read them back."""
    arrays: dict[str, np.ndarray] = {}
    for name, values in columns.data.items():
        if values.dtype.kind == "O":
            labels, codes = factorize(values)
            arrays[LABELS + name] = np.array(labels.tolist(), dtype=str)
            arrays[name] = codes.astype(np.int32)
        else:
            arrays[name] = values
    buffer = io.BytesIO()
    np.savez_compressed(buffer, allow_pickle=False, **arrays)
    return buffer.getvalue()


def decode(blob: bytes) -> Columns:
    """The columns ``encode`` stored, in their order, text again as object arrays (with
    their codes, which ``Columns.factorized`` then returns without factorising them)."""
    stored = np.load(io.BytesIO(blob), allow_pickle=False)
    columns = Columns({})
    for name in stored.files:
        if name.startswith(LABELS):
            continue
        values = stored[name]
        if LABELS + name in stored.files:  # the labels are sorted and distinct: factorize's own
            labels, codes = stored[LABELS + name].astype(object), values.astype(np.intp)
            values = labels[codes]
            columns.codes[name] = (values, labels, codes)
        columns.data[name] = values
    return columns
