"""Adding items to a study from a JSONL stream (the API's bulk upload).

Lines are validated one by one by the study's kind and written in batches inside one
transaction: a stream of any length is held in memory one batch at a time, and an error
anywhere rolls back every batch already written (all or nothing, like a study file).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from annotation.errors import InputError
from annotation.models import Study

from .rows import json_lines
from .studies import write_items
from .validation import checked_items, is_exam

BATCH = 1000


@dataclass(frozen=True)
class UploadResult:
    created: int
    updated: int


def upload_items(study: Study, lines: Iterable[bytes | str]) -> UploadResult:
    """Create or update items from JSONL lines; ``InputError`` ("line N: field") writes nothing."""
    items = checked_items(study.task_kind, study.config, json_lines(lines), exam=is_exam(study))
    created = updated = seen = 0
    batch: list[dict] = []
    with transaction.atomic():
        for item in items:  # raises InputError, rolling back, after the last line if any was bad
            batch.append(item)
            seen += 1
            if len(batch) >= BATCH:
                created, updated = _flush(study, batch, created, updated)
        if not seen:
            raise InputError({"file": ["No items in the upload."]})
        created, updated = _flush(study, batch, created, updated)
    return UploadResult(created=created, updated=updated)


def _flush(study: Study, batch: list[dict], created: int, updated: int) -> tuple[int, int]:
    made, changed = write_items(study, batch)
    batch.clear()
    return created + made, updated + changed
