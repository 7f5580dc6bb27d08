"""The value side of ROME and MEMIT: a vector added to one layer's output at the subject.

A vector δ is added at the subject's last token (or the prompt's last token), in the
request's prompt after each context template, and optimised so the model then writes the
new target. Two terms keep it honest: a KL term holds the model's idea of what the subject
*is* ("{} is a …") where it was (essence drift), and δ's norm is both penalised
(``v_weight_decay`` · ‖δ‖ / ‖v‖²) and bounded (``clamp_norm_factor`` · ‖v‖), where v is the
original vector δ is added to. The rank-one (ROME) or least-squares (MEMIT) weight update
then makes the layer produce that change for the subject's key.

Where δ is read (``at``) sets v, as in the reference code: ROME reads the MLP's output
(``compute_v``), MEMIT the block's output, the residual stream (``compute_z``), which is far
larger, so MEMIT's δ may grow far larger. Adding δ to either is the same change to the
residual stream (the MLP's output is added to it), so only v differs.
The optimisation stops when the whole loss (not the target NLL alone) is below
``v_stop_loss``, again as the reference does.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import torch

from workers.lm.architectures import block, get_module, module_name
from workers.lm.loading import LoadedLM

from .encoding import encode, target_log_probs
from .hparams import LocatedHparams
from .keys import lookup_end, lookup_texts
from .requests import EditRequest

MLP_OUTPUT, BLOCK_OUTPUT = "mlp_out", "block"  # where δ is read and added (see the docstring)


@dataclass(frozen=True)
class ValueDelta:
    delta: torch.Tensor  # (d_model,) float32
    base_norm: float  # ‖v‖: the original vector at the lookup token (plain prompt)
    target_nll: float  # mean NLL of the new target at the last step evaluated
    loss: float  # the whole loss at that step (what the early stop looks at)
    steps: int


@contextmanager
def frozen(model: torch.nn.Module):
    """No gradients for the weights while δ is optimised; flags restored afterwards."""
    flags = [(p, p.requires_grad) for p in model.parameters()]
    for parameter, _ in flags:
        parameter.requires_grad_(False)
    try:
        yield
    finally:
        for parameter, flag in flags:
            parameter.requires_grad_(flag)


def optimise_delta(
    lm: LoadedLM,
    request: EditRequest,
    layer: int,
    templates: list[str],
    hp: LocatedHparams,
    *,
    at: str = MLP_OUTPUT,
) -> ValueDelta:
    """δ for one request at ``layer``'s MLP output or block output (see the module docstring)."""
    fact_token = hp.fact_token
    texts, ends = lookup_texts(request, templates, fact_token)
    target_starts = [len(text) for text in texts]
    texts = [f"{text} {request.target_new}" for text in texts]
    essence = [p.replace("{}", request.subject, 1) for p in hp.essence_prompts]
    essence_ends = [
        lookup_end(text, p.index("{}") + len(request.subject), fact_token)
        for text, p in zip(essence, hp.essence_prompts, strict=True)
    ]
    encoded = encode(lm, texts + essence)
    positions = encoded.last_token_before(ends + essence_ends)
    target_mask = encoded.tokens_after(target_starts + [None] * len(essence))
    n_rewrite = len(texts)
    rows = torch.arange(len(positions), device=positions.device)

    module = _module_at(lm, layer, at)
    delta = torch.zeros(
        lm.model.config.hidden_size, device=lm.device, dtype=torch.float32, requires_grad=True
    )
    base: dict[str, torch.Tensor] = {}

    def add_delta(_module, _args, output):
        hidden = output[0] if isinstance(output, tuple) else output
        if "value" not in base:
            base["value"] = hidden[0, positions[0]].detach().float()
        shift = torch.zeros_like(hidden)
        shift[rows, positions] = delta.to(hidden.dtype)
        return (hidden + shift, *output[1:]) if isinstance(output, tuple) else hidden + shift

    optimiser = torch.optim.Adam([delta], lr=hp.v_lr)
    initial_essence = None
    nll_value, loss_value, step = float("inf"), float("inf"), 0
    handle = module.register_forward_hook(add_delta)
    try:
        with frozen(lm.model), torch.enable_grad():
            for step in range(1, hp.v_steps + 1):
                # No KV cache: nothing is generated, and building one costs every step.
                logits = lm.model(**encoded.inputs, use_cache=False).logits
                ids = encoded.input_ids[:n_rewrite]
                nll = -target_log_probs(logits[:n_rewrite], ids, target_mask[:n_rewrite]).mean()
                essence_lp = torch.log_softmax(
                    logits[rows[n_rewrite:], positions[n_rewrite:]].float(), dim=-1
                )
                if initial_essence is None:
                    initial_essence = essence_lp.detach()
                drift = torch.nn.functional.kl_div(
                    initial_essence, essence_lp, log_target=True, reduction="batchmean"
                )
                decay = hp.v_weight_decay * delta.norm() / base["value"].norm() ** 2
                loss = nll + hp.kl_factor * drift + decay
                nll_value, loss_value = float(nll.detach()), float(loss.detach())
                if loss_value < hp.v_stop_loss or step == hp.v_steps:
                    break
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                bound = hp.clamp_norm_factor * base["value"].norm()
                with torch.no_grad():
                    if delta.norm() > bound:
                        delta.mul_(bound / delta.norm())
    finally:
        handle.remove()
    return ValueDelta(delta.detach(), float(base["value"].norm()), nll_value, loss_value, step)


def _module_at(lm: LoadedLM, layer: int, at: str) -> torch.nn.Module:
    if at == MLP_OUTPUT:
        return get_module(lm.model, module_name(lm.model, "mlp_out", layer))
    if at == BLOCK_OUTPUT:
        return block(lm.model, layer)
    raise ValueError(f"δ is read at {MLP_OUTPUT!r} or {BLOCK_OUTPUT!r}, not {at!r}.")
