"""FT-L: fine-tune one layer's MLP on the new fact, never straying far from the original weights.

Adam minimises the negative log-likelihood of the new target after the request's prompt,
updating only the chosen MLP projections of one layer (``modules``: ``mlp_out`` and/or
``mlp_in``); after every step each weight is clamped into [original − ε, original + ε]
(``norm_constraint``, an L∞ bound). The optimiser works on float32 copies, so half-precision
models train the same way.

Two objectives, two method names (they agree for single-token targets):

- ``ft`` (FT-L, system ``FT_L``): every target token is predicted at the prompt's last
  position, as the reference baseline (kmeng01/rome ``baselines/ft``) does;
- ``ft_m`` (FT-M, system ``FT_M``, ``ft_m.py``): the target is teacher-forced after the
  prompt, each token predicted after the ones before it, as EasyEdit's FT-M does.
"""

from __future__ import annotations

import torch

from workers.lm.architectures import module_name
from workers.lm.loading import LoadedLM

from .base import AppliedEdit
from .encoding import Encoded, encode, target_log_probs
from .hparams import FtHparams
from .requests import EditRequest
from .values import frozen

NAME = "ft"


def system_name(lm: LoadedLM) -> str:
    return "FT_L"


def touched_parameters(lm: LoadedLM, hp: FtHparams) -> list[str]:
    names = []
    for role in hp.modules:
        prefix = module_name(lm.model, role, hp.edited_layer)
        names += [f"{prefix}.{kind}" for kind in ("weight", "bias") if _has(lm, f"{prefix}.{kind}")]
    return names


def apply(lm: LoadedLM, requests: list[EditRequest], hp: FtHparams) -> AppliedEdit:
    return fine_tune(lm, requests, hp, teacher_forced=False, method=NAME, system=system_name(lm))


def target_loss(
    logits: torch.Tensor, encoded: Encoded, mask: torch.Tensor, *, teacher_forced: bool
) -> torch.Tensor:
    """Mean over requests of the target tokens' mean NLL (see the module docstring).

    ``mask`` marks the target's tokens in each prompt-and-target row; without teacher
    forcing every one is scored at the position before the first (the prompt's last token).
    """
    if teacher_forced:
        return -target_log_probs(logits, encoded.input_ids, mask).mean()
    rows = torch.arange(len(mask), device=mask.device)
    last_prompt = mask.int().argmax(1) - 1  # the first target token's position, minus one
    log_probs = torch.log_softmax(logits[rows, last_prompt].float(), dim=-1)  # (n, vocab)
    chosen = log_probs.gather(1, encoded.input_ids * mask)  # (n, tokens); masked out below
    wanted = mask.float()
    return (-(chosen * wanted).sum(1) / wanted.sum(1).clamp(min=1)).mean()


def fine_tune(
    lm: LoadedLM,
    requests: list[EditRequest],
    hp: FtHparams,
    *,
    teacher_forced: bool,
    method: str,
    system: str,
) -> AppliedEdit:
    """Adam within the L∞ bound on ``touched_parameters``; ``teacher_forced`` picks the objective."""
    parameters = dict(lm.model.named_parameters())
    live = [parameters[name] for name in touched_parameters(lm, hp)]
    original = [p.detach().float().clone() for p in live]
    master = [o.clone().requires_grad_(True) for o in original]
    bound = hp.norm_constraint
    texts = [f"{r.filled_prompt} {r.target_new}" for r in requests]
    encoded = encode(lm, texts)
    mask = encoded.tokens_after([len(r.filled_prompt) for r in requests])
    optimiser = torch.optim.Adam(master, lr=hp.lr)
    loss_value, steps_taken = float("inf"), 0
    with frozen(lm.model), torch.enable_grad():
        for parameter in live:
            parameter.requires_grad_(True)
        for step in range(1, hp.steps + 1):
            steps_taken = step
            logits = lm.model(**encoded.inputs).logits
            loss = target_loss(logits, encoded, mask, teacher_forced=teacher_forced)
            loss_value = float(loss.detach())
            if loss_value < hp.stop_loss:
                break
            for parameter in live:
                parameter.grad = None
            loss.backward()
            for weights, parameter in zip(master, live, strict=True):
                weights.grad = _gradient(parameter).float()
            optimiser.step()
            with torch.no_grad():
                for weights, start, parameter in zip(master, original, live, strict=True):
                    weights.copy_(torch.clamp(weights, start - bound, start + bound))
                    parameter.copy_(weights.to(parameter.dtype))
        for parameter in live:
            parameter.grad = None
    return AppliedEdit(
        method=method,
        system=system,
        details={
            "layer": hp.layer,
            "modules": list(hp.modules),
            "steps": steps_taken,
            "final_loss": loss_value,
        },
    )


def _has(lm: LoadedLM, name: str) -> bool:
    try:
        lm.model.get_parameter(name)
    except AttributeError:
        return False
    return True


def _gradient(parameter: torch.Tensor) -> torch.Tensor:
    """The gradient ``backward`` left on a parameter the loss depends on."""
    if parameter.grad is None:
        raise RuntimeError("An edited parameter got no gradient: the loss does not depend on it.")
    return parameter.grad
