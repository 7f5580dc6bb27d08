"""Adding items to a study from a JSONL stream (the API's bulk upload).

Lines are read, checked by the study's kind and written a chunk at a time inside one
transaction (``item_load``): a stream of any length is held in memory one chunk at a time,
and an error anywhere rolls back every chunk already written (all or nothing, like a study
file). Known ids are updated, new ones added.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from annotation.models import Study

from .item_load import load_rows
from .rows import json_lines
from .validation import check_item, is_exam


@dataclass(frozen=True)
class UploadResult:
    created: int
    updated: int


def upload_items(study: Study, lines: Iterable[bytes | str]) -> UploadResult:
    """Create or update items from JSONL lines; ``InputError`` ("line N: field") writes nothing."""
    kind, config, exam = study.task_kind, study.config, is_exam(study)

    def check_for(known: set[str]):  # known ids are updated, so checked as any other
        return lambda raw: check_item(kind, config, raw, exam=exam)

    loaded = load_rows(study, json_lines(lines), check_for, empty="No items in the upload.")
    return UploadResult(created=loaded.added, updated=loaded.updated)
