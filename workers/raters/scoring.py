"""Log-probabilities of closed answers under a causal LM, batched.

For a prompt and its allowed answers, each answer is scored as the sum of the
log-probabilities of its tokens after the prompt (the answer follows the cue after a
space). Every (prompt, answer) pair is one row; rows are left-padded so every answer
ends at the right edge and only the last few positions' logits are computed. A prompt
longer than the model's positions loses its beginning (the question stays).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from workers.lm.loading import LoadedLM


@dataclass(frozen=True)
class Scored:
    """Per allowed answer, its log-probability; ``truncated``: prompt tokens cut off the front."""

    logprobs: tuple[float, ...]
    truncated: int = 0


@torch.no_grad()
def score_options(
    lm: LoadedLM, requests: Sequence[tuple[str, Sequence[str]]], *, batch_size: int = 8
) -> list[Scored]:
    """For each (prompt, answers), the log-probability of each answer, in order."""
    tokenizer = lm.tokenizer
    rows: list[tuple[int, list[int], int]] = []  # (request index, token ids, answer length)
    truncated = [0] * len(requests)
    for index, (prompt, answers) in enumerate(requests):
        prompt_ids = tokenizer(prompt)["input_ids"]
        for answer in answers:
            answer_ids = tokenizer(f" {answer}", add_special_tokens=False)["input_ids"]
            room = lm.max_positions - len(answer_ids)
            kept = prompt_ids[-room:] if len(prompt_ids) > room else prompt_ids
            truncated[index] = max(truncated[index], len(prompt_ids) - len(kept))
            rows.append((index, kept + answer_ids, len(answer_ids)))
    scores: list[list[float]] = [[] for _ in requests]
    for start in range(0, len(rows), batch_size):
        batch = rows[start : start + batch_size]
        for (index, _, _), value in zip(batch, _score_rows(lm, batch), strict=True):
            scores[index].append(value)
    return [Scored(tuple(values), cut) for values, cut in zip(scores, truncated, strict=True)]


def _score_rows(lm: LoadedLM, batch: Sequence[tuple[int, list[int], int]]) -> list[float]:
    pad = lm.tokenizer.pad_token_id
    width = max(len(ids) for _, ids, _ in batch)
    keep = max(length for _, _, length in batch) + 1
    input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, (_, ids, _) in enumerate(batch):
        input_ids[row, width - len(ids) :] = torch.tensor(ids)
        mask[row, width - len(ids) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    output = lm.model(
        input_ids=input_ids.to(lm.device),
        attention_mask=mask.to(lm.device),
        position_ids=positions.to(lm.device),
        logits_to_keep=keep,
    )
    # logits[:, j] predicts token width - keep + j + 1: the last ``keep - 1`` of them are answer slots.
    logprobs = torch.log_softmax(output.logits[:, :-1].float(), dim=-1)
    targets = input_ids[:, width - keep + 1 :].to(lm.device)
    picked = logprobs.gather(-1, targets[..., None])[..., 0]
    values = []
    for row, (_, _, length) in enumerate(batch):
        values.append(float(picked[row, keep - 1 - length :].sum()))
    return values
