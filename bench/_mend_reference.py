"""MEND beside the reference (eric-mitchell/mend), for ``bench/editing_reference.py --methods mend``.

The reference's editor (``algs/mend.py``: ``MEND``, its ``GradientTransform`` and the
``IDMLP`` networks of ``nn.py``) and its losses (``losses.py``: the masked NLL and
``kl_loc_loss``) are imported from a local checkout at run time, never copied. Its training
loop (``trainer.py``) needs wandb, hydra and its datasets, so this wrapper drives the
reference's pieces the way ``EditTrainer.edit_step`` and ``train_step`` do (edit the
``edit_inner`` batch, score ``edit_outer`` and the locality texts on the edited model,
``cedit`` · edit + ``cloc`` · KL, clip, Adam), on the very batches our training uses
(``workers.editing.mend_training.training_schedule``), one optimiser step per edit as ours.
Both sides start from the same networks: ours are built with the seed, and their values
are copied into the reference's freshly built ones before training.

Run-time workarounds, in this wrapper only:

- ``higher`` (eric-mitchell's fork, for an in-place functional model) is not installable
  here: a stand-in ``higher.patch.monkeypatch`` returns the model called through
  ``torch.func.functional_call`` with the new weights, which is what ``MEND.edit`` needs;
- ``utils`` imports ``hydra`` for archive loading only: an empty stand-in module;
- the model's weights must take gradients for ``MEND.edit``'s ``loss.backward()`` (our
  loaded models do not): switched on for the run, off afterwards;
- the reference's second optimiser for the step sizes (``lr_opt``) is stepped after the first
  has cleared the gradients, so it never moves them: it is left out (the same numbers).
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

REF_MODULES = ("algs", "algs.mend", "editable_model", "hooks", "nn", "utils", "losses", "higher", "hydra")


def import_mend_reference(repo: Path) -> dict[str, types.ModuleType]:
    """``algs.mend`` and ``losses`` from the checkout, with the stand-ins above."""
    for name in [m for m in sys.modules if m.split(".")[0] in REF_MODULES]:
        del sys.modules[name]
    sys.modules["higher"], sys.modules["higher.patch"] = _stand_in_higher()
    sys.modules["hydra"] = types.ModuleType("hydra")
    sys.path.insert(0, str(repo))
    try:
        return {name: importlib.import_module(name) for name in ("algs.mend", "losses")}
    finally:
        sys.path.remove(str(repo))


def _stand_in_higher() -> tuple[types.ModuleType, types.ModuleType]:
    import torch
    from torch.func import functional_call

    class FunctionalModel:
        """The model with other weights: what ``higher``'s in-place monkeypatch gives ``MEND.edit``."""

        def __init__(self, model: torch.nn.Module):
            self.model = model
            self.handles = getattr(model, "handles", [])
            self.weights: dict[str, torch.Tensor] = dict(model.named_parameters())

        def named_parameters(self):
            return list(self.weights.items())

        def update_params(self, values) -> None:
            self.weights = dict(zip(self.weights, values, strict=True))

        def __call__(self, *args, **kwargs):
            return functional_call(self.model, self.weights, args=args, kwargs=kwargs)

        def train(self, mode: bool = True):
            self.model.train(mode)
            return self

        def eval(self):
            return self.train(False)

    def monkeypatch(model, in_place: bool = False, **_):
        return FunctionalModel(model)

    higher, patch = types.ModuleType("higher"), types.ModuleType("higher.patch")
    patch.monkeypatch, patch._MonkeyPatchBase = monkeypatch, FunctionalModel
    higher.patch = patch
    return higher, patch


def reference_config(weights, settings) -> types.SimpleNamespace:
    """The reference's configuration (``config/alg/mend.yaml``) with our settings."""
    mend = types.SimpleNamespace(
        one_sided=False,
        n_hidden=settings.hidden,
        hidden_dim=None,
        init="id",
        norm=True,
        combine=True,
        x_only=False,
        delta_only=False,
        act="relu",
        rank=settings.rank,
        mlp_class="IDMLP",
        shared=True,
    )
    model = types.SimpleNamespace(name="gpt2", inner_params=[w.name for w in weights])
    return types.SimpleNamespace(model=model, edit_lr=settings.edit_lr, mend=mend)


def copy_initial_networks(ours, theirs) -> None:
    """Our freshly built networks' values into the reference's (same shapes, other names)."""
    import torch

    with torch.no_grad():
        for weight_shape, network in ours.networks.items():
            rows, columns = (int(n) for n in weight_shape.split("x"))
            transform = theirs.mend[str((rows, columns))]
            for mine, layer in zip(network.layers, transform.mlp.layers, strict=True):
                layer.u.copy_(mine.up)
                layer.v.copy_(mine.down)
                layer.bias.copy_(mine.bias)
                layer.mode_scale.weight.copy_(mine.scale)
                layer.mode_shift.weight.copy_(mine.shift)
        theirs.edit_lrs.copy_(ours.step_sizes)


def labelled(batch) -> dict:
    """A ``TargetBatch`` as the reference's batches: labels are the tokens, -100 off the target."""
    inputs = dict(batch.encoded.inputs)
    inputs["labels"] = batch.encoded.input_ids.masked_fill(~batch.mask, -100)
    return inputs


def train_reference(ref: dict, lm, weights, train, settings, initial):
    """The reference's MEND trained on our schedule (module docstring); returns it in eval mode."""
    import torch

    from workers.editing.encoding import encode
    from workers.editing.mend_training import training_schedule

    config = reference_config(weights, settings)
    mend = ref["algs.mend"].MEND(lm.model, config, lambda: None)
    copy_initial_networks(initial, mend)
    optimiser = torch.optim.Adam(mend.outer_parameters(), lr=settings.lr)
    kl_loc_loss = ref["losses"].kl_loc_loss
    mend.train(True)
    for case, unrelated in training_schedule(lm, train, settings):
        loc = encode(lm, unrelated).inputs
        with torch.no_grad():
            base = mend(**loc)
        edited, _ = mend.edit(labelled(case.edit))
        outer = labelled(case.outer)
        edit_loss = mend.edit_loss_fn(edited(**outer), outer["labels"])["nll"]
        locality = kl_loc_loss(base.detach(), edited(**loc), mask=loc["attention_mask"])
        loss = settings.edit_weight * edit_loss + settings.locality_weight * locality
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(mend.outer_parameters(), settings.grad_clip)
        optimiser.step()
    mend.train(False)
    return mend


def reference_update(mend, lm, request) -> dict:
    """The reference's ΔW for one request, by parameter name (the model left as it was)."""
    from workers.editing.mend import target_batch

    batch = target_batch(lm, [request.filled_prompt], [request.target_new])
    edited, _ = mend.edit(labelled(batch))
    before = dict(lm.model.named_parameters())
    return {
        name: (value - before[name]).detach().clone()
        for name, value in edited.model.weights.items()
        if name in mend.config.model.inner_params
    }


def run_mend(repo: Path, lm, train, evaluate, layers, settings) -> list[tuple[str, dict, float]]:
    """Train both sides, edit each ``evaluate`` request alone with each, measure, undo.

    Returns (side, summary, seconds) rows; the ours row carries the ΔW relative difference.
    """
    import copy
    import time

    import torch

    from workers.editing.mend import Editor, edited_weights, in_layout
    from workers.editing.mend_training import train_editor

    weights = edited_weights(lm, layers, settings.modules)
    torch.manual_seed(settings.seed)
    initial = Editor(weights, settings)
    started = time.monotonic()
    ours = train_editor(lm, weights, train, settings, start=copy.deepcopy(initial))
    our_seconds = time.monotonic() - started
    ref = import_mend_reference(repo)
    flags = {name: p.requires_grad for name, p in lm.model.named_parameters()}
    for parameter in lm.model.parameters():
        parameter.requires_grad_(True)
    try:
        started = time.monotonic()
        theirs = train_reference(ref, lm, weights, train, settings, initial)
        their_seconds = time.monotonic() - started
        our_updates, their_updates = {}, {}
        for request in evaluate:
            our_updates[request.case_id] = _our_update(lm, ours, request, in_layout)
            their_updates[request.case_id] = reference_update(theirs, lm, request)
    finally:
        for name, parameter in lm.model.named_parameters():
            parameter.requires_grad_(flags[name])
        for module in lm.model.modules():  # the reference's hooks stay on the model otherwise
            module._forward_hooks.clear()
            module._backward_hooks.clear()
    started = time.monotonic()
    nudged = train_editor(lm, weights, train, settings, start=_nudged(initial, NUDGE))
    nudged_seconds = time.monotonic() - started
    nudged_updates = {r.case_id: _our_update(lm, nudged, r, in_layout) for r in evaluate}
    rows = []
    for side, updates, seconds in (
        ("ours", our_updates, our_seconds),
        ("reference", their_updates, their_seconds),
        ("ours, nudged", nudged_updates, nudged_seconds),
    ):
        rows.append((side, _measured(lm, evaluate, updates), seconds))
    rows[0][1]["relative_difference"] = _relative(_flat(our_updates), _flat(their_updates))
    rows[2][1]["relative_difference"] = _relative(_flat(nudged_updates), _flat(our_updates))
    return rows


NUDGE = 1e-6  # relative: about float32 rounding of a few operations


def _nudged(editor, size: float):
    """A copy of freshly built networks with every value moved by ``size`` relative (seeded): the
    kind of difference two correct implementations' rounding makes. Trained like ours, it shows
    how far training carries such a difference (the reference's distance is read against it)."""
    import copy

    import torch

    nudged = copy.deepcopy(editor)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for parameter in nudged.parameters():
            parameter.mul_(1 + size * torch.randn(parameter.shape, generator=generator))
    return nudged


def _flat(updates: dict) -> dict:
    return {f"{case}:{name}": value for case, update in updates.items() for name, value in update.items()}


def _our_update(lm, editor, request, in_layout) -> dict:
    import torch

    from workers.editing.mend import gradient_factors, target_batch

    batch = target_batch(lm, [request.filled_prompt], [request.target_new])
    _, factors = gradient_factors(lm, editor.weights, batch)
    with torch.no_grad():
        changes = editor.deltas(factors, learn_statistics=False)
    return {name: in_layout(lm, name, change).detach().clone() for name, change in changes.items()}


def _measured(lm, requests, updates) -> dict:
    """Each request's update added, the short-form metrics taken, the weights restored bit for bit."""
    import torch

    from workers.editing.base import WeightSnapshot
    from workers.editing.metrics import preferences, short_form_metrics

    rows = []
    parameters = dict(lm.model.named_parameters())
    for request in requests:
        before = preferences(lm, request)
        snapshot = WeightSnapshot(lm.model, list(updates[request.case_id]))
        with torch.no_grad():
            for name, change in updates[request.case_id].items():
                parameters[name].add_(change)
        try:
            rows.append(short_form_metrics(lm, request, before=before))
        finally:
            snapshot.restore()
    count = len(rows)
    return {
        "efficacy": sum(bool(r["efficacy"]) for r in rows),
        "requests": count,
        "paraphrase": sum(r["paraphrase_success"] or 0 for r in rows) / count,
        "locality": sum(r["neighbourhood_success"] or 0 for r in rows) / count,
        "delta": sum(float(sum(v.norm() ** 2 for v in updates[r.case_id].values()) ** 0.5) for r in requests)
        / count,
    }


def _relative(ours: dict, theirs: dict) -> float:
    diff = sum(float(((ours[n] - theirs[n]) ** 2).sum()) for n in theirs)
    base = sum(float((theirs[n] ** 2).sum()) for n in theirs)
    return (diff / base) ** 0.5 if base else float("inf")
