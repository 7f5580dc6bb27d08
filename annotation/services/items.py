"""Adding items to a study from a JSONL stream (the API's bulk upload).

Lines are validated one by one by the study's kind and written in batches inside one
transaction: a stream of any length is held in memory one batch at a time, and an error
anywhere rolls back every batch already written (all or nothing, like a study file).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from annotation.errors import InputError
from annotation.models import Study

from .studies import MAX_REPORTED_ERRORS, check_item, write_items

BATCH = 1000


@dataclass(frozen=True)
class UploadResult:
    created: int
    updated: int


class _Abort(Exception):
    """Rolls the transaction back after validation errors."""


def upload_items(study: Study, lines: Iterable[bytes | str]) -> UploadResult:
    """Create or update items from JSONL lines; ``InputError`` ("line N: field") writes nothing."""
    kind = study.task_kind
    errors: dict[str, list[str]] = {}
    seen: dict[str, int] = {}
    created = updated = 0
    batch: list[dict] = []
    try:
        with transaction.atomic():
            for number, line in enumerate(lines, start=1):
                item = _check_line(kind, study, line, number, seen, errors)
                if item is not None and not errors:
                    batch.append(item)
                if len(errors) >= MAX_REPORTED_ERRORS:
                    break
                if len(batch) >= BATCH:
                    created, updated = _flush(study, batch, created, updated)
            if not errors and not seen:
                errors["file"] = ["No items in the upload."]
            if errors:
                raise _Abort
            created, updated = _flush(study, batch, created, updated)
    except _Abort:
        raise InputError(errors) from None
    return UploadResult(created=created, updated=updated)


def _check_line(kind, study: Study, line, number: int, seen: dict, errors: dict) -> dict | None:
    text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    if not text.strip():
        return None
    try:
        raw = json.loads(text)
        item = check_item(kind, study.config, raw, study)
    except json.JSONDecodeError as exc:
        errors[f"line {number}"] = [f"Not valid JSON: {exc.msg}."]
        return None
    except InputError as exc:
        errors.update({f"line {number}: {path}": messages for path, messages in exc.errors.items()})
        return None
    if item["external_id"] in seen:
        errors[f"line {number}: external_id"] = [
            f"Repeats the external_id of line {seen[item['external_id']]}."
        ]
        return None
    seen[item["external_id"]] = number
    return item


def _flush(study: Study, batch: list[dict], created: int, updated: int) -> tuple[int, int]:
    made, changed = write_items(study, batch)
    batch.clear()
    return created + made, updated + changed
