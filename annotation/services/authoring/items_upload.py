"""Adding items to a study from a JSONL stream (the API's bulk upload).

Lines are read, checked by the study's kind and written a chunk at a time inside one
transaction (``item_load``): a stream of any length is held in memory one chunk at a time,
and an error anywhere rolls back every chunk already written (all or nothing, like a study
file). Known ids are updated, new ones added.

An upload of more than ``ITEMS_UPLOAD_INLINE_LINES`` lines is not loaded in the request: it
is stored in ``UPLOAD_DIR`` (which the workers share) and loaded by an ``items_upload`` job,
so a million lines never hold a web thread for minutes; the API answers 202 with the job.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from rest_framework import serializers

from annotation.errors import InputError
from annotation.models import Job, Study
from annotation.services.jobs import JobParameters, start_job

from .input_rows import json_lines
from .item_load import load_rows
from .validation import check_item, is_exam

# A stored upload's name: the study it is for, and a random part no one can guess.
STORED_NAME = re.compile(r"items-(?P<study>[0-9]+)-[0-9a-f]{32}\.jsonl")


@dataclass(frozen=True)
class UploadResult:
    created: int
    updated: int


@dataclass(frozen=True, kw_only=True)
class ItemsUploadParameters(JobParameters):
    """Parameters of the ``items_upload`` job kind (started by a large API items upload)."""

    file: str  # a STORED_NAME in UPLOAD_DIR

    class Serializer(serializers.Serializer):
        file = serializers.RegexField(
            STORED_NAME.pattern, max_length=100, help_text="A stored upload, named by the items upload."
        )


def upload_items(study: Study, lines: Iterable[bytes | str], *, user=None, reason: str = "") -> UploadResult:
    """Create or update items from JSONL lines; ``InputError`` ("line N: field") writes nothing."""
    kind, config, exam = study.task_kind, study.config, is_exam(study)

    def check_for(known: set[str]):  # known ids are updated, so checked as any other
        return lambda raw: check_item(kind, config, raw, exam=exam)

    loaded = load_rows(
        study,
        json_lines(lines),
        check_for,
        empty="No items in the upload.",
        source="api",
        user=user,
        reason=reason,
    )
    return UploadResult(created=loaded.added, updated=loaded.updated)


def receive_items_upload(
    study: Study, lines: Iterable[bytes | str], *, user, reason: str = ""
) -> UploadResult | Job:
    """The API's items upload: loaded now (its result) when it has at most
    ``ITEMS_UPLOAD_INLINE_LINES`` lines that are not blank, else stored and left to an ``items_upload`` job
    (the job, queued)."""
    path, count = _stored(study, lines)
    if count <= settings.ITEMS_UPLOAD_INLINE_LINES:
        try:
            with path.open("rb") as body:
                return upload_items(study, body, user=user, reason=reason)
        finally:
            path.unlink(missing_ok=True)
    try:
        return start_job(kind="items_upload", parameters={"file": path.name}, study=study, user=user)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def load_stored_upload(job_id: int, study: Study, name: str) -> dict:
    """The ``items_upload`` job's work: the stored upload ``name`` loaded into ``study`` as
    ``upload_items`` loads it, then deleted. Refused, it is deleted too, and its errors are
    kept in the job's ``result`` (``{"errors": {"line N: field": […]}}``) beside the failure."""
    match = STORED_NAME.fullmatch(name)
    path = Path(settings.UPLOAD_DIR) / name
    if match is None or int(match["study"]) != study.pk or not path.is_file():
        raise InputError({"file": ["No stored upload of this study by that name (each is loaded once)."]})
    try:
        with path.open("rb") as body:
            result = upload_items(study, body)
    except InputError as exc:
        Job.objects.filter(pk=job_id).update(result={"errors": exc.errors})
        path.unlink(missing_ok=True)
        where, messages = next(iter(exc.errors.items()))
        note = f"Nothing was written: {len(exc.errors)} errors, all in the job's result; the first:"
        raise InputError({"file": [note], where: messages}) from None
    path.unlink(missing_ok=True)
    return {"created": result.created, "updated": result.updated}


def _stored(study: Study, lines: Iterable[bytes | str]) -> tuple[Path, int]:
    """The upload written to ``UPLOAD_DIR`` as it is read (a 413 midway leaves no file);
    its path and number of lines with an item (blank lines are kept, for the line numbers)."""
    folder = Path(settings.UPLOAD_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"items-{study.pk}-{uuid.uuid4().hex}.jsonl"
    count = 0
    try:
        with path.open("wb") as out:
            for line in lines:
                out.write(line if isinstance(line, bytes) else line.encode())
                out.write(b"\n")
                count += bool(line.strip())  # items, not the blank lines between them
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path, count
