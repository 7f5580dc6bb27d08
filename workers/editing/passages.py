"""Edited-model passages into a study: edit, measure, write, undo, next.

For each request and method: apply the edit (weights copied first), record the short-form
metrics, write a main passage (about the subject) and a related passage (about the
coupled entity) by sampling (top-k 50, top-p 0.95, temperature 0.9 unless the job says
otherwise), restore the weights bit for bit, then the next method. The passages of one
request become items for the study's kind (``items``) and are added together. Both the
``edit_and_generate`` command and job call ``edited_passages_into_study``.
"""

from __future__ import annotations

import hashlib

from annotation.errors import InputError
from annotation.job_parameters import EditAndGenerateParameters
from annotation.models import Item, Study
from annotation.services.authoring.studies import add_items
from annotation.services.authoring.validation import check_item
from annotation.services.jobs import Progress
from workers.lm.generation import GenerationRequest, Sampling, generate_texts
from workers.lm.loading import LoadedLM, shared_lm

from . import get_method
from .base import AppliedEdit, edit_applied
from .hparams import Hparams, load_hparams, model_keys
from .items import (
    ITEM_BUILDERS,
    MAIN,
    RELATED,
    Case,
    Passage,
    human_passages,
    planned_ids,
)
from .metrics import preferences, short_form_metrics
from .requests import EditRequest, read_edit_requests


def hparams_for(lm: LoadedLM, method: str, extra_dir: str | None = None, path: str | None = None) -> Hparams:
    """The method's hyperparameters for this model (see ``workers.editing.hparams``)."""
    return load_hparams(
        method,
        keys=model_keys(lm.spec.name, lm.spec.source),
        num_layers=lm.num_layers,
        extra_dir=extra_dir,
        path=path,
    )


def checked_hparams(
    lm: LoadedLM, method: str, extra_dir: str | None = None, path: str | None = None
) -> Hparams:
    """``hparams_for``, and the weights the method would touch looked up now: a layer the model
    lacks, or a MEND editor trained for another model, fails before any edit is made."""
    hp = hparams_for(lm, method, extra_dir, path)
    get_method(method).touched_parameters(lm, hp)
    return hp


def passage_seed(seed: int, case_id: str, role: str) -> int:
    """The same for every method on one case and role: paired passages share their random stream."""
    digest = hashlib.sha256(f"{seed}:{case_id}:{role}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def write_passages(
    lm: LoadedLM,
    request: EditRequest,
    applied: AppliedEdit,
    parameters: EditAndGenerateParameters,
    about: dict,
) -> list[Passage]:
    """The main passage and, when the request has a related entity, the related one."""
    sampling = Sampling(top_p=parameters.top_p, top_k=parameters.top_k, temperature=parameters.temperature)
    prompts = [(MAIN, request.main_passage_prompt)]
    if request.related_prompt:
        prompts.append((RELATED, request.related_prompt))
    generation = [
        GenerationRequest(
            applied.prefix + prompt,
            seed=passage_seed(parameters.seed, request.case_id, role),
            sampling=sampling,
            max_new_tokens=lm.new_tokens_allowed(parameters.max_new_tokens),
        )
        for role, prompt in prompts
    ]
    outputs = generate_texts(lm, generation, batch_size=len(generation))
    decoding = {**sampling.as_dict(), "max_new_tokens": generation[0].max_new_tokens}
    return [
        Passage(
            system=applied.system,
            method=applied.method,
            role=role,
            text=f"{prompt}{output.text}".strip(),
            provenance={
                "model": lm.name,
                "decoding": decoding,
                "seed": g.seed,
                "prompt": prompt,
                **about,
            },
        )
        for (role, prompt), g, output in zip(prompts, generation, outputs, strict=True)
    ]


def methods_needed(
    kind: str, request: EditRequest, methods: list[str], model_tag: str, held: set[str]
) -> list:
    """The methods whose items the study still lacks for this request."""
    plan = planned_ids(kind, request, methods, model_tag)
    return [method for method in methods if not plan[method] <= held]


def edited_passages_into_study(
    study: Study, *, parameters: EditAndGenerateParameters, progress: Progress
) -> dict:
    """Run ``EditAndGenerateParameters`` on a study; returns a summary with per-edit metrics."""
    kind = parameters.kind or study.kind
    if kind != study.kind:
        raise InputError({"kind": [f"Study {study.slug!r} is a {study.kind!r} study, not {kind!r}."]})
    if kind not in ITEM_BUILDERS:
        raise InputError({"kind": [f"Edited passages make {', '.join(ITEM_BUILDERS)} items, not {kind!r}."]})
    requests = read_edit_requests(parameters.requests)
    methods = list(parameters.methods)
    lm = shared_lm(parameters.model)
    hparams = {m: checked_hparams(lm, m, parameters.hparams_dir) for m in methods}
    held = set(Item.objects.filter(study=study).values_list("external_id", flat=True))
    plan = [(r, methods_needed(kind, r, methods, lm.spec.tag, held)) for r in requests]
    check_items_fit(study, kind, plan, lm)
    total = sum(len(needed) for _, needed in plan)
    done, added, metrics = 0, 0, {}
    progress(done, total=total, message=f"{len(requests)} edit requests, {total} edits to make")
    for request, needed in plan:
        if not needed:
            continue
        passages, case_metrics = edit_and_write(lm, request, needed, hparams, parameters, progress, done)
        done += len(needed)
        case = Case(request, lm.spec.tag, tuple(passages + human_passages(request)))
        added += add_items(study, ITEM_BUILDERS[kind](case)).added
        metrics[request.case_id] = case_metrics
        progress(done, message=f"case {request.case_id} done, {added} items added")
    return {
        "model": lm.name,
        "kind": kind,
        "requests": len(requests),
        "edits": done,
        "added": added,
        "metrics": metrics,
    }


STAND_IN_TEXT = "A stand-in passage. It is only used to check the items before editing."


def check_items_fit(study: Study, kind: str, plan: list[tuple[EditRequest, list[str]]], lm: LoadedLM) -> None:
    """Before any edit: the items each request will make, built from stand-in passages, must
    pass the study's kind (a ranking page needs as many systems as it shows, say), so a job
    never spends its edits and then fails on the write."""
    for request, needed in plan:
        if not needed:
            continue
        roles = [MAIN, *([RELATED] if request.related_prompt else [])]
        stand_ins = [
            Passage(get_method(method).system_name(lm), method, role, STAND_IN_TEXT)
            for method in needed
            for role in roles
        ]
        case = Case(request, lm.spec.tag, tuple(stand_ins + human_passages(request)))
        for item in ITEM_BUILDERS[kind](case):
            try:
                check_item(study.task_kind, study.config, item)
            except InputError as exc:
                raise InputError(
                    {f"request {request.case_id}: {path}": messages for path, messages in exc.errors.items()}
                ) from None


def edit_and_write(
    lm: LoadedLM,
    request: EditRequest,
    methods: list[str],
    hparams: dict[str, Hparams],
    parameters: EditAndGenerateParameters,
    progress: Progress,
    done: int,
) -> tuple[list[Passage], dict]:
    """Every method on one request: passages and short-form metrics per method."""
    before = preferences(lm, request)
    passages, metrics = [], {}
    for offset, method in enumerate(methods):
        hp = hparams[method]
        with edit_applied(lm, method, [request], hp) as applied:
            metrics[method] = short_form_metrics(lm, request, prefix=applied.prefix, before=before)
            about = {
                "edit": {
                    "hparams": {"file": hp.file, "version": hp.version},
                    "details": applied.details,
                    "metrics": metrics[method],
                }
            }
            passages += write_passages(lm, request, applied, parameters, about)
        progress(done + offset + 1, message=f"case {request.case_id}: {method} done")
    return passages, metrics
