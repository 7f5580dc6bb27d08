"""``train_mend``: train MEND's editor networks for one model on edit requests, and save them.

Each training step takes one request (seeded order) and does what an edit will do later: the
gradient factors of its new target after its prompt go through the networks, the model gets
the change, and then (through ``torch.func.functional_call``, the model's weights untouched)
the changed model is scored on

- the edit: the new target after the prompt and after each paraphrase (mean NLL per token);
- locality: KL between the unchanged and the changed model's next-token distributions at every
  position of unrelated texts (the request's neighbourhood prompts, and ``OTHER_FACTS`` other
  requests' prompts with their true targets),

loss = ``edit_weight`` · edit + ``locality_weight`` · locality, as in MEND's training (the
reference's ``cedit`` and ``cloc``). One Adam (``lr``) updates the networks and the step
sizes together, every step. (The reference also builds a second Adam for the step sizes,
``lr_lr``, but steps it after the first has cleared their gradients, so it never moves them:
left out here, the same numbers.) The normalisation statistics are gathered while training
and frozen afterwards.

A share of the requests (``held_out_share``, at least one) is never trained on: after
training, each is edited through the saved editor exactly as ``edit_model`` would, measured
with the short-form metrics and undone; the means go into the definition.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path

import torch

from annotation.errors import InputError
from annotation.job_parameters import TrainMendParameters
from annotation.services.jobs import Progress, no_progress
from workers.lm.loading import LoadedLM

from .base import edit_applied
from .hparams import HparamsError, MendHparams
from .mend import (
    Editor,
    MendSettings,
    TargetBatch,
    definition_base,
    edited_weights,
    gradient_factors,
    in_layout,
    locality_kl,
    save_editor,
    target_batch,
    target_nll,
    write_definition,
)
from .metrics import preferences, short_form_metrics
from .requests import EditRequest, read_edit_requests

DEFAULT_LAYERS = 3  # the last three layers, as the reference's GPT-2 configurations
PROGRESS_EVERY = 10
OTHER_FACTS = 3  # other requests' true facts in each step's locality texts


@dataclass
class TrainingCase:
    """One request's three batches, tokenised once."""

    request: EditRequest
    edit: TargetBatch  # the prompt and the new target: where the gradient is taken
    outer: TargetBatch  # the prompt and its paraphrases with the new target: the edit loss
    unrelated: list[str]  # texts whose predictions must not move (another request's added per step)


def job_settings(parameters: TrainMendParameters) -> MendSettings:
    """The settings a ``train_mend`` job trains with: its parameters of the same names (the
    job's defaults live in its serializer; ``bench/workers.py`` trains with them too)."""
    return MendSettings(**{f.name: getattr(parameters, f.name) for f in fields(MendSettings)})


def default_layers(num_layers: int) -> list[int]:
    return list(range(max(0, num_layers - DEFAULT_LAYERS), num_layers))


def check_layers(layers: list[int] | None, num_layers: int) -> list[int]:
    chosen = default_layers(num_layers) if not layers else sorted(set(layers))
    wrong = [layer for layer in chosen if not 0 <= layer < num_layers]
    if wrong:
        raise InputError(
            {"layers": [f"Layer {wrong[0]} does not exist: the model has layers 0 to {num_layers - 1}."]}
        )
    return chosen


def split_requests(requests: list[EditRequest], share: float, seed: int) -> tuple[list, list]:
    """(train, held out): a seeded shuffle, at least one held out and two to train on."""
    if len(requests) < 3:
        raise InputError({"data": ["MEND needs at least 3 edit requests (two to train on, one held out)."]})
    order = list(requests)
    random.Random(seed).shuffle(order)
    held = min(len(order) - 2, max(1, round(len(order) * share)))
    return order[held:], order[:held]


def check_output(output: str | Path) -> Path:
    """The editor's folder: new or empty (an editor is never written over another)."""
    output = Path(output)
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise InputError({"output": [f"{output} exists and is not an empty directory."]})
    return output


def file_digest(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def train_mend(
    lm: LoadedLM,
    *,
    data: str | Path,
    output: str | Path,
    layers: list[int] | None,
    settings: MendSettings,
    progress: Progress = no_progress,
) -> dict:
    """Train, save into ``output`` (new or empty), measure the held-out requests; the summary."""
    output = check_output(output)
    requests = read_edit_requests(data, parameter="data")
    chosen = check_layers(layers, lm.num_layers)
    train, held_out = split_requests(requests, settings.held_out_share, settings.seed)
    started = time.monotonic()
    weights = edited_weights(lm, chosen, settings.modules)
    editor = train_editor(lm, weights, train, settings, progress)
    seconds = round(time.monotonic() - started, 2)
    definition = definition_base(lm, weights, chosen, settings) | {
        "data": {
            "file": Path(data).name,
            "sha256": file_digest(data),
            "requests": len(requests),
            "train": sorted(r.case_id for r in train),
            "held_out": sorted(r.case_id for r in held_out),
        },
        "training": {"seconds": seconds, "steps": settings.steps},
    }
    save_editor(output, editor, definition)
    progress(settings.steps, settings.steps, f"measuring {len(held_out)} held-out requests")
    definition["held_out"] = held_out_metrics(lm, output, held_out)
    write_definition(output, definition)
    return {"editor": str(output), "seconds": seconds, "held_out": definition["held_out"]}


def training_case(lm: LoadedLM, request: EditRequest) -> TrainingCase:
    prompts = [request.filled_prompt, *request.paraphrase_prompts]
    return TrainingCase(
        request=request,
        edit=target_batch(lm, [request.filled_prompt], [request.target_new]),
        outer=target_batch(lm, prompts, [request.target_new] * len(prompts)),
        unrelated=list(request.neighborhood_prompts),
    )


def training_schedule(
    lm: LoadedLM, train: list[EditRequest], settings: MendSettings
) -> Iterator[tuple[TrainingCase, list[str]]]:
    """Per step, the request to edit and the unrelated texts to keep (seeded; the benchmark
    feeds the reference implementation the same sequence)."""
    cases = [training_case(lm, r) for r in train]
    order = random.Random(settings.seed)
    for _ in range(settings.steps):
        case = order.choice(cases)
        others = order.sample([c for c in cases if c is not case], min(OTHER_FACTS, len(cases) - 1))
        yield case, [*case.unrelated, *(f"{o.request.filled_prompt} {o.request.target_true}" for o in others)]


def train_editor(
    lm: LoadedLM,
    weights: list,
    train: list[EditRequest],
    settings: MendSettings,
    progress: Progress = no_progress,
    start: Editor | None = None,
) -> Editor:
    """The networks trained for ``settings.steps`` edits (seeded; the model is left as it was),
    from new ones or from ``start`` (the benchmark's probe of how far rounding carries)."""
    torch.manual_seed(settings.seed)
    editor = (start or Editor(weights, settings)).to(lm.device)
    parameters = dict(lm.model.named_parameters())
    optimiser = torch.optim.Adam(editor.parameters(), lr=settings.lr)
    editor.train()
    for step, (case, unrelated) in enumerate(training_schedule(lm, train, settings)):
        loss = training_loss(lm, editor, parameters, case, unrelated, settings)
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(editor.parameters(), settings.grad_clip)
        optimiser.step()
        if (step + 1) % PROGRESS_EVERY == 0:
            progress(step + 1, settings.steps, f"step {step + 1}: loss {float(loss.detach()):.3f}")
    editor.eval()
    return editor


def training_loss(
    lm: LoadedLM,
    editor: Editor,
    parameters: dict[str, torch.Tensor],
    case: TrainingCase,
    unrelated: list[str],
    settings: MendSettings,
) -> torch.Tensor:
    """One training edit's loss (module docstring), differentiable in the editor only."""
    from torch.func import functional_call

    from .encoding import encode

    others = encode(lm, unrelated)
    with torch.no_grad():
        before = lm.model(**others.inputs).logits
    _, factors = gradient_factors(lm, editor.weights, case.edit)
    changes = editor.deltas(factors, learn_statistics=True)
    edited = {
        name: parameters[name].detach() + in_layout(lm, name, change).to(parameters[name].dtype)
        for name, change in changes.items()
    }
    outer = functional_call(lm.model, edited, args=(), kwargs=case.outer.encoded.inputs).logits
    after = functional_call(lm.model, edited, args=(), kwargs=others.inputs).logits
    edit_loss = target_nll(outer, case.outer)
    locality = locality_kl(before, after, others.inputs["attention_mask"])
    return settings.edit_weight * edit_loss + settings.locality_weight * locality


def held_out_metrics(lm: LoadedLM, editor_dir: Path, held_out: list[EditRequest]) -> dict:
    """Mean short-form metrics of the held-out requests, each edited alone and undone."""
    hp = MendHparams(version=1, editor=str(editor_dir), file=editor_dir.name)
    rows = []
    for request in held_out:
        before = preferences(lm, request)
        try:
            with edit_applied(lm, "mend", [request], hp):
                rows.append(short_form_metrics(lm, request, before=before))
        except HparamsError as exc:  # pragma: no cover - the editor was saved just now
            raise InputError({"output": [str(exc)]}) from None

    def mean(key: str) -> float | None:
        values = [float(row[key]) for row in rows if row.get(key) is not None]
        return round(sum(values) / len(values), 4) if values else None

    return {
        "requests": len(rows),
        "efficacy": mean("efficacy"),
        "paraphrase_success": mean("paraphrase_success"),
        "locality": mean("neighbourhood_success"),
        "neighbourhood_unchanged": mean("neighbourhood_unchanged"),
    }
