"""Short-form metrics of one edit: does the next token follow the new fact, and only where it should?

Probabilities are the mean per-token log-probability of a target after a prompt (the
edit's prefix, e.g. IKE's demonstrations, in front). ``efficacy``: the new target beats
the true one after the edit prompt. ``paraphrase_success``: share of paraphrase prompts
where it does. ``neighbourhood_success``: share of neighbourhood prompts (other subjects
sharing the true target) where the true target still wins; ``neighbourhood_unchanged``:
share where the preference is the same as before the edit.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from workers.lm.loading import LoadedLM

from .encoding import encode, target_log_probs
from .requests import EditRequest

BATCH = 16


@torch.no_grad()
def mean_log_probs(
    lm: LoadedLM, prompts: Sequence[str], targets: Sequence[str], prefix: str = ""
) -> list[float]:
    """Mean log-probability per token of each target after its prompt."""
    values: list[float] = []
    for start in range(0, len(prompts), BATCH):
        batch_prompts = [prefix + p for p in prompts[start : start + BATCH]]
        batch_targets = targets[start : start + BATCH]
        encoded = encode(lm, [f"{p} {t}" for p, t in zip(batch_prompts, batch_targets, strict=True)])
        mask = encoded.tokens_after([len(p) for p in batch_prompts])
        logits = lm.model(**encoded.inputs).logits
        values += target_log_probs(logits, encoded.input_ids, mask).tolist()
    return values


def prefers_new(lm: LoadedLM, request: EditRequest, prompts: Sequence[str], prefix: str = "") -> list[bool]:
    """Per prompt: is the new target more likely than the true one?"""
    if not prompts:
        return []
    both = list(prompts) + list(prompts)
    targets = [request.target_new] * len(prompts) + [request.target_true] * len(prompts)
    scores = mean_log_probs(lm, both, targets, prefix)
    return [new > true for new, true in zip(scores[: len(prompts)], scores[len(prompts) :], strict=True)]


def preferences(lm: LoadedLM, request: EditRequest, prefix: str = "") -> dict[str, list[bool]]:
    """Preferences for the edit prompt, its paraphrases and its neighbourhood, in one place."""
    return {
        "rewrite": prefers_new(lm, request, [request.filled_prompt], prefix),
        "paraphrase": prefers_new(lm, request, request.paraphrase_prompts, prefix),
        "neighbourhood": prefers_new(lm, request, request.neighborhood_prompts, prefix),
    }


def short_form_metrics(
    lm: LoadedLM, request: EditRequest, *, prefix: str = "", before: dict[str, list[bool]] | None = None
) -> dict:
    """The metrics above for the model as it is now; ``before``: preferences of the unedited model."""
    after = preferences(lm, request, prefix)
    metrics = {
        "efficacy": after["rewrite"][0],
        "paraphrase_success": _share(after["paraphrase"]),
        "neighbourhood_success": _share([not p for p in after["neighbourhood"]]),
    }
    if before is not None:
        same = [a == b for a, b in zip(after["neighbourhood"], before["neighbourhood"], strict=True)]
        metrics["neighbourhood_unchanged"] = _share(same)
    return metrics


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None
