"""Where the MLPs are, per architecture: the table the editing methods look layers up in.

Adding an architecture is adding a row: the transformer blocks' container, and the MLP's
input (up) and output (down) projections with ``{}`` for the layer index. The editors read
keys at the down projection's input and write its weight. GPT-2's ``Conv1D`` stores that
weight as (in, out), ``nn.Linear`` as (out, in); ``weight_in_out`` hides the difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import torch
from torch import nn


@dataclass(frozen=True)
class LayerNames:
    blocks: str  # the ModuleList of transformer blocks
    mlp_in: str  # the MLP's up projection, "{}" = layer index
    mlp_out: str  # the MLP's down projection (ROME/MEMIT/FT-L edit this one)


ARCHITECTURES: dict[str, LayerNames] = {
    "gpt2": LayerNames("transformer.h", "transformer.h.{}.mlp.c_fc", "transformer.h.{}.mlp.c_proj"),
    "gptj": LayerNames("transformer.h", "transformer.h.{}.mlp.fc_in", "transformer.h.{}.mlp.fc_out"),
    "gpt_neox": LayerNames(
        "gpt_neox.layers", "gpt_neox.layers.{}.mlp.dense_h_to_4h", "gpt_neox.layers.{}.mlp.dense_4h_to_h"
    ),
    "llama": LayerNames("model.layers", "model.layers.{}.mlp.up_proj", "model.layers.{}.mlp.down_proj"),
    "mistral": LayerNames("model.layers", "model.layers.{}.mlp.up_proj", "model.layers.{}.mlp.down_proj"),
}


class UnsupportedArchitecture(LookupError):
    """The model's type has no row in ``ARCHITECTURES``."""


def layer_names(model: nn.Module) -> LayerNames:
    model_type = getattr(model.config, "model_type", "")
    try:
        return ARCHITECTURES[model_type]
    except KeyError:
        known = ", ".join(sorted(ARCHITECTURES))
        raise UnsupportedArchitecture(
            f"Editing does not know where the MLPs of a {model_type!r} model are; known: {known}. "
            "Add a row to workers/lm/architectures.py."
        ) from None


def module_name(model: nn.Module, role: str, layer: int) -> str:
    """``role`` is ``mlp_in`` or ``mlp_out``."""
    return getattr(layer_names(model), role).format(layer)


def get_module(model: nn.Module, name: str) -> nn.Module:
    return model.get_submodule(name)


def block(model: nn.Module, layer: int) -> nn.Module:
    return cast(nn.ModuleList, model.get_submodule(layer_names(model).blocks))[layer]


def stores_in_out(module: nn.Module) -> bool:
    """True for GPT-2's Conv1D (weight is in × out), False for nn.Linear (out × in)."""
    return not isinstance(module, nn.Linear)


def weight_in_out(module: nn.Module) -> torch.Tensor:
    """The weight as an (in, out) view, whatever the module's own layout."""
    weight = _weight(module)
    return weight if stores_in_out(module) else weight.T


def add_to_weight(module: nn.Module, update_in_out: torch.Tensor) -> None:
    """weight += update, with the update given as (in, out)."""
    with torch.no_grad():
        update = update_in_out if stores_in_out(module) else update_in_out.T
        weight = _weight(module)
        weight.add_(update.to(weight.dtype))


def _weight(module: nn.Module) -> torch.Tensor:
    weight = module.weight
    if not isinstance(weight, torch.Tensor):
        raise TypeError(f"{type(module).__name__} has no weight tensor.")
    return weight
