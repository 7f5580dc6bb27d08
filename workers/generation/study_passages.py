"""RoFT passages into a study: read a corpus, plan, generate what is missing, add the items.

Both the ``generate_continuations`` command and the ``continuations`` job call
``continuations_into_study``. Item ids are deterministic, so passages the study already
holds are neither generated again nor added twice; items are written batch by batch, so a
job that stops half-way keeps what it made and a rerun finishes the rest.
"""

from __future__ import annotations

from pathlib import Path

from annotation.errors import InputError
from annotation.job_parameters import ContinuationsParameters
from annotation.models import Item, Study
from annotation.services.authoring.input_rows import read_jsonl_file
from annotation.services.authoring.studies import add_items
from annotation.services.jobs import Progress

from .backend import load_backend
from .continuations import CorpusDocument, build_passages, passage_id, plan_passages


def read_corpus(path: str | Path) -> list[CorpusDocument]:
    """``{"id", "text", "category"}`` per line; any bad line rejects the file (line and field named)."""
    return read_jsonl_file(
        path, _check_document, parameter="corpus", what="documents", id_field="id", unique_by=lambda d: d.id
    )


def _check_document(record) -> CorpusDocument:
    if not isinstance(record, dict):
        raise InputError({"": ["A line is a JSON object."]})
    if not isinstance(record.get("id"), (str, int)) or not str(record.get("id")).strip():
        raise InputError({"id": ["Give each document an id (a string)."]})
    for field in ("text", "category"):
        if not isinstance(record.get(field), str) or not record[field].strip():
            raise InputError({field: [f"Give each document a non-empty '{field}'."]})
    unknown = sorted(set(record) - {"id", "text", "category"})
    if unknown:
        raise InputError({name: ["Unknown field."] for name in unknown})
    return CorpusDocument(str(record["id"]), record["text"].strip(), record["category"].strip())


def continuations_into_study(
    study: Study, *, parameters: ContinuationsParameters, progress: Progress
) -> dict:
    """Generate the study's missing RoFT passages (``ContinuationsParameters``) and add them."""
    documents = read_corpus(parameters.corpus)
    length = parameters.sentences
    plans = plan_passages(
        documents,
        length=length,
        p_values=parameters.p or None,
        all_human_share=parameters.all_human_share,
        seed=parameters.seed,
    )
    backend = load_backend(parameters.model)
    held = set(Item.objects.filter(study=study).values_list("external_id", flat=True))
    todo = [plan for plan in plans if passage_id(plan, backend.name, length) not in held]
    done, added, rejected = len(plans) - len(todo), 0, 0
    progress(done, total=len(plans), message=f"{done} passages already in the study")
    batch_size = parameters.batch_size
    for start in range(0, len(todo), batch_size):
        chunk = todo[start : start + batch_size]
        items = []
        for _plan, item in build_passages(
            chunk, backend, length=length, batch_size=batch_size, max_new_tokens=parameters.max_new_tokens
        ):
            if item is None:
                rejected += 1
            else:
                items.append(item)
        added += add_items(study, items).added
        done += len(chunk)
        progress(done, message=f"{added} passages added, {rejected} failed the quality rules")
    return {
        "model": backend.name,
        "documents": len(documents),
        "planned": len(plans),
        "already_present": len(plans) - len(todo),
        "added": added,
        "rejected": rejected,
    }
