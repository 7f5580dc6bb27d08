"""MEMIT: many edits at once, the change spread over a range of layers.

Each request gets a target for the residual stream after the range's last layer: its
current value there plus δ (``values``, optimised at that layer's block output, the
residual stream, as the reference's ``compute_z``: the norm bound and weight decay are
relative to the residual stream, not to the MLP's output). Then, layer by layer
from the first, the remaining gap R (the targets minus what the model now produces,
divided by the layers left) is written into that layer's down projection by least
squares against the keys K of all requests at once (``keys.balanced_key``):
ΔW = R Kᵀ (λ C + K Kᵀ)⁻¹, with C the keys' second moment and λ ``mom2_update_weight``.
"""

from __future__ import annotations

import torch

from workers.lm.architectures import add_to_weight, get_module, module_name
from workers.lm.loading import LoadedLM

from .base import AppliedEdit
from .hparams import MemitHparams
from .keys import balanced_key, layer_output_at_lookup
from .requests import EditRequest
from .stats import second_moments
from .templates import context_templates
from .values import BLOCK_OUTPUT, optimise_delta

NAME = "memit"


def system_name(lm: LoadedLM) -> str:
    return "MEMIT"


def touched_parameters(lm: LoadedLM, hp: MemitHparams) -> list[str]:
    return [f"{module_name(lm.model, 'mlp_out', layer)}.weight" for layer in hp.edited_layers]


def apply(lm: LoadedLM, requests: list[EditRequest], hp: MemitHparams) -> AppliedEdit:
    layers = hp.edited_layers
    last = layers[-1]
    templates = context_templates(lm, hp.context_templates)
    moments = second_moments(lm, layers, hp)
    deltas = [optimise_delta(lm, request, last, templates, hp, at=BLOCK_OUTPUT) for request in requests]
    targets = layer_output_at_lookup(lm, last, requests, hp.fact_token).double()
    targets += torch.stack([d.delta for d in deltas]).double()
    weight = hp.mom2_update_weight
    gaps = []
    for index, layer in enumerate(layers):
        keys = torch.stack(
            [balanced_key(lm, layer, request, templates, hp.fact_token) for request in requests]
        ).double()  # (n, in)
        gap = targets - layer_output_at_lookup(lm, last, requests, hp.fact_token).double()  # (n, out)
        share = gap / (len(layers) - index)
        system = weight * moments[layer].double() + keys.T @ keys  # (in, in)
        update = torch.linalg.solve(system, keys.T) @ share  # (in, out)
        add_to_weight(get_module(lm.model, module_name(lm.model, "mlp_out", layer)), update.float())
        gaps.append(round(float(gap.norm(dim=1).mean()), 4))
    return AppliedEdit(
        method=NAME,
        system=system_name(lm),
        details={
            "layers": list(layers),
            "edits": len(requests),
            "gap_before_each_layer": gaps,
            "target_nll": [round(d.target_nll, 4) for d in deltas],
            "delta_norm": [round(float(d.delta.norm()), 4) for d in deltas],
            "base_norm": [round(d.base_norm, 4) for d in deltas],
            "relative_delta": [round(float(d.delta.norm()) / max(d.base_norm, 1e-9), 4) for d in deltas],
            "steps": [d.steps for d in deltas],
        },
    )
