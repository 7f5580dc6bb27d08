"""ROME: a rank-one update of one MLP down projection.

For the subject's key k* (the down projection's input at the subject's last token,
averaged over context prefixes) and the change δ its output needs (``values``), the
update is ΔW = δ uᵀ / (uᵀ k) with u = C⁻¹ k*, C the second moment of the layer's keys
(``stats``) and k the key of the request's own prompt. The direction u is that of the
averaged key, weighted so that keys the layer often sees change little; dividing by uᵀ k
makes the layer add exactly δ for the prompt itself (and about δ after other prefixes).
Several requests are applied one after another, each on the weights the previous one left.
"""

from __future__ import annotations

import torch

from workers.lm.architectures import add_to_weight, get_module, module_name
from workers.lm.loading import LoadedLM

from .base import AppliedEdit
from .hparams import RomeHparams
from .keys import lookup_keys
from .requests import EditRequest
from .stats import second_moments
from .templates import context_templates
from .values import optimise_delta

NAME = "rome"


def system_name(lm: LoadedLM) -> str:
    return "ROME"


def touched_parameters(lm: LoadedLM, hp: RomeHparams) -> list[str]:
    return [f"{module_name(lm.model, 'mlp_out', hp.edited_layer)}.weight"]


def apply(lm: LoadedLM, requests: list[EditRequest], hp: RomeHparams) -> AppliedEdit:
    layer = hp.edited_layer
    templates = context_templates(lm, hp.context_templates)
    # C factorised once for all requests (LU, as ``torch.linalg.solve`` does: the same numbers).
    moment_lu = torch.linalg.lu_factor(second_moments(lm, [layer], hp)[layer].double())
    module = get_module(lm.model, module_name(lm.model, "mlp_out", layer))
    edits = []
    for request in requests:
        keys = lookup_keys(lm, layer, request, templates, hp.fact_token).double()
        left = torch.linalg.lu_solve(*moment_lu, keys.mean(0)[:, None])[:, 0]  # C⁻¹ k*
        value = optimise_delta(lm, request, layer, templates, hp)
        update = torch.outer(left, value.delta.double()) / left.dot(keys[0])  # templates[0] is "{}"
        add_to_weight(module, update.float())
        edits.append(
            {
                "case_id": request.case_id,
                "delta_norm": round(float(value.delta.norm()), 4),
                "relative_delta": round(float(value.delta.norm()) / max(value.base_norm, 1e-9), 4),
                "target_nll": round(value.target_nll, 4),
                "steps": value.steps,
            }
        )
    return AppliedEdit(method=NAME, system=system_name(lm), details={"layer": layer, "edits": edits})
