"""MEND: a trained editor turns an edit's fine-tuning gradient into a weight change.

For a weight W (input activations x, output gradient δ) the gradient of one token's loss is
the rank-one x δᵀ, so a prompt's gradient is a sum of such products. MEND never forms it:
each pair (x, δ) goes through a small network, trained once per model (``train_mend``,
``workers.editing.mend_training``), and the change is ΔW = η Σ x̃ δ̃ᵀ over the prompt's
tokens, with η a step size learned per edited weight (its sign too: at the start the
network passes its inputs through, and the steps learn to descend). Mitchell et al., "Fast
Model Editing at Scale" (reference: eric-mitchell/mend); here in our own code, with the
reference's choices where they change the numbers:

- the network sees x and δ normalised (mean and standard deviation per feature, gathered
  over every training edit, then frozen), concatenated, through ``hidden + 1`` residual
  layers z + relu(A B z + b) with A B of rank ``rank``, identity at the start (A = 0);
- weights of one shape share one network, each with its own scale and shift per layer
  (the "mode" of the weight);
- tokens whose x or δ is zero (the padding) are left out.

The edit's loss is the new target's mean negative log-likelihood per token, teacher-forced
after the request's prompt; several requests are edited in one step (one batch). The
trained editor is a directory: ``definition.json`` (model, layers, data, settings, held-out
figures) and ``networks.safetensors``; ``MendHparams.editor`` names it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import torch
from torch import nn

from workers.lm.architectures import add_to_weight, get_module, module_name, stores_in_out, weight_in_out
from workers.lm.loading import LoadedLM
from workers.lm.scoring import token_log_probs

from .base import AppliedEdit
from .encoding import Encoded, encode
from .hparams import EDITOR_DEFINITION, HparamsError, MendHparams
from .requests import EditRequest
from .values import frozen

NAME = "mend"
NETWORKS = "networks.safetensors"
DEFINITION_VERSION = 1
STD_FLOOR = 1e-7  # added to the standard deviation before dividing (the reference's)


def system_name(lm: LoadedLM) -> str:
    return "MEND"


@dataclass(frozen=True, kw_only=True)
class MendSettings:
    """How an editor is built and trained (recorded in its definition). No defaults here: the
    job's parameters hold them (``annotation.job_parameters.TrainMendParameters``)."""

    modules: tuple[str, ...]  # mlp_in and/or mlp_out of each edited layer
    rank: int  # of each residual layer's A B
    hidden: int  # residual layers before the last
    steps: int  # training edits, one optimiser step each
    lr: float  # Adam's step for the networks and the step sizes
    edit_lr: float  # the step sizes' start
    edit_weight: float  # of the edit loss (the reference's ``cedit``)
    locality_weight: float  # of the locality KL (``cloc``)
    grad_clip: float
    held_out_share: float
    seed: int


@dataclass(frozen=True)
class EditedWeight:
    name: str  # the parameter's name in the model
    shape: tuple[int, int]  # (in, out), whatever the module's own layout


class ResidualLowRank(nn.Module):
    """z + relu(scale_mode · (A B z + b) + shift_mode): the identity while A is zero."""

    def __init__(self, width: int, rank: int, modes: int, generator: torch.Generator):
        super().__init__()
        middle = min(rank, width)
        self.up = nn.Parameter(torch.zeros(width, middle))
        self.down = nn.Parameter(torch.randn(middle, width, generator=generator))
        self.bias = nn.Parameter(torch.zeros(width))
        self.scale = nn.Parameter(torch.ones(modes, width))
        self.shift = nn.Parameter(torch.zeros(modes, width))

    def forward(self, z: torch.Tensor, mode: int) -> torch.Tensor:
        hidden = (self.up @ (self.down @ z.T)).T + self.bias
        return z + (hidden * self.scale[mode] + self.shift[mode]).clamp(min=0)


class FactorNetwork(nn.Module):
    """Transforms the (x, δ) pairs of every weight of one shape (x: ``inputs`` wide)."""

    def __init__(self, inputs: int, outputs: int, modes: int, settings: MendSettings, generator):
        super().__init__()
        self.inputs, self.outputs = inputs, outputs
        width = inputs + outputs
        self.layers = nn.ModuleList(
            [ResidualLowRank(width, settings.rank, modes, generator) for _ in range(settings.hidden + 1)]
        )
        for side, size in (("x", inputs), ("delta", outputs)):
            self.register_buffer(f"{side}_mean", torch.zeros(size))
            self.register_buffer(f"{side}_m2", torch.zeros(size))
        self.register_buffer("count", torch.zeros(()))

    def forward(
        self, x: torch.Tensor, delta: torch.Tensor, mode: int, *, learn_statistics: bool
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(x̃, δ̃) for the token rows where neither is zero; statistics updated first in training."""
        x, delta = x.reshape(-1, self.inputs).float(), delta.reshape(-1, self.outputs).float()
        keep = (x != 0).any(-1) & (delta != 0).any(-1)
        x, delta = x[keep], delta[keep]
        if learn_statistics:
            self._gather(x, delta)
        if self.count < 2:
            raise RuntimeError(
                "MEND normalises with statistics of at least two token rows, and the first edit gave one "
                "(the model's last layer alone gets a gradient at the target's position only): "
                "edit more layers."
            )
        z = torch.cat([self._normalised(x, "x"), self._normalised(delta, "delta")], -1)
        for layer in self.layers:
            z = layer(z, mode)
        return z[:, : self.inputs], z[:, self.inputs :]

    def _normalised(self, values: torch.Tensor, side: str) -> torch.Tensor:
        mean, m2 = getattr(self, f"{side}_mean"), getattr(self, f"{side}_m2")
        return (values - mean) / ((m2 / (self.count - 1)).sqrt() + STD_FLOOR)

    @torch.no_grad()
    def _gather(self, x: torch.Tensor, delta: torch.Tensor) -> None:
        """Running mean and sum of squared deviations, one token row at a time (Welford's
        update, in the reference's order: merging a batch at once rounds differently)."""
        for x_row, delta_row in zip(x, delta, strict=True):
            self.count += 1
            for side, row in (("x", x_row), ("delta", delta_row)):
                mean, m2 = getattr(self, f"{side}_mean"), getattr(self, f"{side}_m2")
                gap = row - mean
                mean += gap / self.count
                m2 += gap * (row - mean)


class Editor(nn.Module):
    """The factor networks (one per weight shape) and the learned step size of each weight."""

    def __init__(self, weights: Sequence[EditedWeight], settings: MendSettings):
        super().__init__()
        self.weights = list(weights)
        shapes = list(dict.fromkeys(w.shape for w in self.weights))
        generator = torch.Generator().manual_seed(settings.seed)
        self.networks = nn.ModuleDict(
            {
                _shape_key(shape): FactorNetwork(
                    *shape, sum(w.shape == shape for w in self.weights), settings, generator
                )
                for shape in shapes
            }
        )
        self.step_sizes = nn.Parameter(torch.full((len(self.weights),), settings.edit_lr))

    def deltas(
        self, factors: dict[str, tuple[torch.Tensor, torch.Tensor]], *, learn_statistics: bool
    ) -> dict[str, torch.Tensor]:
        """ΔW per weight, (in, out), from its (x, δ) factors."""
        changes = {}
        for index, weight in enumerate(self.weights):
            same_shape = [w for w in self.weights if w.shape == weight.shape]
            network = self.networks[_shape_key(weight.shape)]
            x, delta = network(
                *factors[weight.name], same_shape.index(weight), learn_statistics=learn_statistics
            )
            changes[weight.name] = self.step_sizes[index] * (x.T @ delta)
        return changes


def _shape_key(shape: tuple[int, int]) -> str:
    return f"{shape[0]}x{shape[1]}"


def edited_weights(lm: LoadedLM, layers: Sequence[int], modules: Sequence[str]) -> list[EditedWeight]:
    """The weights MEND changes: each module of each layer, in that order."""
    names = [module_name(lm.model, role, layer) for layer in layers for role in modules]
    shapes = [weight_in_out(get_module(lm.model, name)).shape for name in names]
    return [
        EditedWeight(f"{name}.weight", (int(shape[0]), int(shape[1])))
        for name, shape in zip(names, shapes, strict=True)
    ]


# ---------------------------------------------------------------- batches and losses


@dataclass
class TargetBatch:
    """Prompts followed by a target each, right-padded; ``mask`` marks the targets' tokens."""

    encoded: Encoded
    mask: torch.Tensor


def target_batch(lm: LoadedLM, prompts: Sequence[str], targets: Sequence[str]) -> TargetBatch:
    encoded = encode(lm, [f"{prompt} {target}" for prompt, target in zip(prompts, targets, strict=True)])
    return TargetBatch(encoded, encoded.tokens_after([len(prompt) for prompt in prompts]))


def target_nll(logits: torch.Tensor, batch: TargetBatch) -> torch.Tensor:
    """Mean negative log-likelihood over every target token of the batch (the reference's
    ``masked_log_probs``: tokens weigh alike, whichever row they are in)."""
    wanted = batch.mask[:, 1:].float()
    return -(token_log_probs(logits, batch.encoded.input_ids) * wanted).sum() / wanted.sum().clamp(min=1)


def locality_kl(before: torch.Tensor, after: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """KL(before ‖ after) of the next-token distributions, averaged over the real positions."""
    old = torch.log_softmax(before.float(), -1)
    new = torch.log_softmax(after.float(), -1)
    per_position = (old.exp() * (old - new)).sum(-1)
    wanted = attention_mask.float()
    return (per_position * wanted).sum() / wanted.sum()


@contextmanager
def _recording(model: nn.Module, modules: Sequence[str]) -> Iterator[dict[str, list[torch.Tensor]]]:
    """Each module's input and output of the forward passes inside the block."""
    seen: dict[str, list[torch.Tensor]] = {}

    def hook(name: str) -> Callable:
        def record(module, inputs, output):
            seen[name] = [inputs[0], output]

        return record

    handles = [get_module(model, name).register_forward_hook(hook(name)) for name in modules]
    try:
        yield seen
    finally:
        for handle in handles:
            handle.remove()


def gradient_factors(
    lm: LoadedLM, weights: Sequence[EditedWeight], batch: TargetBatch
) -> tuple[float, dict[str, tuple[torch.Tensor, torch.Tensor]]]:
    """The edit loss and, per weight, its input activations x and output gradient δ (detached)."""
    modules = [w.name.removesuffix(".weight") for w in weights]
    parameters = dict(lm.model.named_parameters())
    with frozen(lm.model), torch.enable_grad():
        for weight in weights:
            parameters[weight.name].requires_grad_(True)
        with _recording(lm.model, modules) as seen:
            loss = target_nll(lm.model(**batch.encoded.inputs).logits, batch)
        outputs = torch.autograd.grad(loss, [seen[name][1] for name in modules])
    factors = {
        weight.name: (seen[name][0].detach(), gradient.detach())
        for weight, name, gradient in zip(weights, modules, outputs, strict=True)
    }
    return float(loss.detach()), factors


def in_layout(lm: LoadedLM, name: str, change: torch.Tensor) -> torch.Tensor:
    """An (in, out) change in the parameter's own layout."""
    return change if stores_in_out(get_module(lm.model, name.removesuffix(".weight"))) else change.T


# ---------------------------------------------------------------- saved editors


@dataclass(frozen=True)
class TrainedEditor:
    directory: Path
    definition: dict
    editor: Editor


def settings_of(definition: dict) -> MendSettings:
    values = dict(definition["settings"])
    values["modules"] = tuple(values["modules"])
    return MendSettings(**values)


def save_editor(directory: Path, editor: Editor, definition: dict) -> None:
    from safetensors.torch import save_file

    directory.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in editor.state_dict().items()}, str(directory / NETWORKS))
    write_definition(directory, definition)


def write_definition(directory: Path, definition: dict) -> None:
    text = json.dumps(definition, indent=2) + "\n"
    (directory / EDITOR_DEFINITION).write_text(text, encoding="utf-8")


def definition_base(lm: LoadedLM, weights: Sequence[EditedWeight], layers: Sequence[int], settings) -> dict:
    """What every definition records about the model and the editor's shape."""
    return {
        "version": DEFINITION_VERSION,
        "method": NAME,
        "model": lm.name,
        "model_type": getattr(lm.model.config, "model_type", ""),
        "num_layers": lm.num_layers,
        "layers": list(layers),
        "weights": [
            {"name": w.name, "shape": list(w.shape), "fingerprint": fingerprint(lm, w.name)} for w in weights
        ],
        "settings": json.loads(json.dumps(asdict(settings))),
    }


def fingerprint(lm: LoadedLM, name: str) -> list[float]:
    """The weight's norm and sum: what tells two models of one shape apart, and survives
    loading the model in another precision (a digest of the bytes would not)."""
    weight = lm.model.get_parameter(name).detach().double()
    return [round(float(weight.norm()), 6), round(float(weight.sum()), 6)]


FINGERPRINT_TOLERANCE = 1e-2  # relative; half precision moves a norm by about 1e-4


def load_editor(lm: LoadedLM, directory: str | Path) -> TrainedEditor:
    """The editor in ``directory``, checked against the model it is about to edit."""
    directory = Path(directory)
    stamp = tuple(
        (directory / name).stat().st_mtime_ns
        for name in (EDITOR_DEFINITION, NETWORKS)
        if (directory / name).is_file()
    )
    loaded = _load_editor(directory.resolve(), stamp)
    check_model(lm, loaded)
    loaded.editor.to(lm.device)  # where the gradient factors will be (a no-op once there)
    return loaded


@lru_cache(maxsize=2)
def _load_editor(directory: Path, stamp: tuple) -> TrainedEditor:
    from safetensors.torch import load_file

    try:
        definition = json.loads((directory / EDITOR_DEFINITION).read_text(encoding="utf-8"))
        weights = [
            EditedWeight(w["name"], (int(w["shape"][0]), int(w["shape"][1]))) for w in definition["weights"]
        ]
        editor = Editor(weights, settings_of(definition))
        editor.load_state_dict(load_file(str(directory / NETWORKS)))
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise HparamsError(f"{directory}: not a usable MEND editor ({str(exc).splitlines()[0]}).") from None
    editor.eval()
    return TrainedEditor(directory, definition, editor)


def check_model(lm: LoadedLM, trained: TrainedEditor) -> None:
    """An editor only fits the weights it was trained on: same names, shapes and fingerprints."""
    definition = trained.definition
    fits = lm.num_layers == definition["num_layers"] and trained.editor.weights == edited_weights(
        lm, definition["layers"], definition["settings"]["modules"]
    )
    if fits:
        fits = all(
            abs(now - then) <= FINGERPRINT_TOLERANCE * max(abs(then), 1.0)
            for w in definition["weights"]
            for now, then in zip(fingerprint(lm, w["name"]), w["fingerprint"], strict=True)
        )
    if not fits:
        raise HparamsError(
            f"{trained.directory}: this editor was trained for {trained.definition['model']!r} "
            f"({trained.definition['num_layers']} layers); {lm.name!r} has other weights. "
            "Train one for this model with train_mend."
        )


# ---------------------------------------------------------------- the method


def touched_parameters(lm: LoadedLM, hp: MendHparams) -> list[str]:
    return [w.name for w in load_editor(lm, hp.editor).editor.weights]


def apply(lm: LoadedLM, requests: list[EditRequest], hp: MendHparams) -> AppliedEdit:
    trained = load_editor(lm, hp.editor)
    editor = trained.editor
    batch = target_batch(lm, [r.filled_prompt for r in requests], [r.target_new for r in requests])
    loss, factors = gradient_factors(lm, editor.weights, batch)
    with torch.no_grad():
        changes = editor.deltas(factors, learn_statistics=False)
    norms = {}
    for name, change in changes.items():
        module = get_module(lm.model, name.removesuffix(".weight"))
        add_to_weight(module, change)
        norms[name] = round(float(change.norm()), 6)
    return AppliedEdit(
        method=NAME,
        system=system_name(lm),
        details={
            "layers": trained.definition["layers"],
            "editor": trained.definition.get("data", {}).get("sha256", "")[:12],
            "edits": len(requests),
            "loss_before": round(loss, 4),
            "delta_norms": norms,
        },
    )
