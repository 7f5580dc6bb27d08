"""Short-form metrics of one edit: does the next token follow the new fact, and only where it should?

Probabilities are the mean per-token log-probability of a target after a prompt (the
edit's prefix, e.g. IKE's demonstrations, in front). ``efficacy``: the new target beats
the true one after the edit prompt. ``paraphrase_success``: share of paraphrase prompts
where it does. ``neighbourhood_success``: share of neighbourhood prompts (other subjects
sharing the true target) where the true target still wins; ``neighbourhood_unchanged``:
share where the preference is the same as before the edit.

This mirrors the ROME reference (``experiments/py/eval_utils_counterfact.py::
test_batch_prediction`` in kmeng01/rome): each target after ``f"{prompt} {target}"``,
scored as the mean over its tokens of their log-probabilities, rows padded on the right,
the new target compared with the true one. The reference reads the target's tokens from
``" " + target`` tokenized alone and the prompt's length from the prompt tokenized alone;
``workers.lm.scoring`` reads both from the whole text, which is the same wherever the
reference's assumption (the whole text tokenizes as prompt + target) holds.
"""

from __future__ import annotations

from collections.abc import Sequence

from workers.lm.loading import LoadedLM
from workers.lm.scoring import score_targets

from .requests import EditRequest

BATCH = 16


def prefers_new(lm: LoadedLM, request: EditRequest, prompts: Sequence[str], prefix: str = "") -> list[bool]:
    """Per prompt: is the new target more likely than the true one (mean log-probability per token)?"""
    targets = [request.target_new, request.target_true]
    scored = score_targets(
        lm, [(prefix + prompt, targets) for prompt in prompts], batch_size=BATCH, padding_side="right"
    )
    return [new > true for new, true in (result.means() for result in scored)]


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
