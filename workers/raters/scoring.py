"""Log-probabilities of closed answers under a causal LM, batched.

For a prompt and its allowed answers, each answer is scored as the sum of the
log-probabilities of its tokens after the prompt (the answer follows the cue after a
space). When the answers of a prompt differ only in their last token (scale points,
letters, yes / no: one token each, or one after a shared leading space) the prompt is one
row and one next-token distribution scores them all; otherwise every
(prompt, answer) pair is one row. Rows are left-padded so every answer ends at the right
edge and only the last few positions' logits are computed. A prompt longer than the
model's positions loses its beginning (the question stays).
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
    # (request, prompt + shared answer prefix, prefix length, the last token of each answer)
    single: list[tuple[int, list[int], int, list[int]]] = []
    rows: list[tuple[int, list[int], int]] = []  # (request, prompt + answer ids, answer length)
    truncated = [0] * len(requests)
    for index, (prompt, answers) in enumerate(requests):
        prompt_ids, answer_ids = split_tokens(tokenizer, prompt, answers)
        prefix = answer_ids[0][:-1]
        if len({len(ids) for ids in answer_ids}) == 1 and all(ids[:-1] == prefix for ids in answer_ids):
            kept = prompt_ids[-(lm.max_positions - len(prefix)) :]
            truncated[index] = len(prompt_ids) - len(kept)
            single.append((index, kept + prefix, len(prefix), [ids[-1] for ids in answer_ids]))
            continue
        for ids in answer_ids:
            room = lm.max_positions - len(ids)
            kept = prompt_ids[-room:] if len(prompt_ids) > room else prompt_ids
            truncated[index] = max(truncated[index], len(prompt_ids) - len(kept))
            rows.append((index, kept + ids, len(ids)))
    scores: list[list[float]] = [[] for _ in requests]
    for start in range(0, len(single), batch_size):
        batch = single[start : start + batch_size]
        for (index, *_), values in zip(batch, _score_next_tokens(lm, batch), strict=True):
            scores[index] = values
    for start in range(0, len(rows), batch_size):
        row_batch = rows[start : start + batch_size]
        for (index, _, _), value in zip(row_batch, _score_rows(lm, row_batch), strict=True):
            scores[index].append(value)
    return [Scored(tuple(values), cut) for values, cut in zip(scores, truncated, strict=True)]


def split_tokens(tokenizer, prompt: str, answers: Sequence[str]) -> tuple[list[int], list[list[int]]]:
    """The prompt's tokens and each answer's, as the text ``prompt + " " + answer`` is tokenized
    whole: the answer's tokens are what follows the part every such text shares with the
    prompt. (Tokenizing the answer alone can differ: a SentencePiece tokenizer adds a space
    mark of its own, and a merge may cross the boundary.)"""
    prompt_ids = list(tokenizer(prompt)["input_ids"])
    whole = [list(tokenizer(f"{prompt} {answer}")["input_ids"]) for answer in answers]
    shared = len(prompt_ids)
    for ids in whole:  # every answer keeps at least one token of its own
        shared = min(shared, _common_prefix(prompt_ids, ids), len(ids) - 1)
    return prompt_ids[:shared], [ids[shared:] for ids in whole]


def _common_prefix(first: list[int], second: list[int]) -> int:
    length = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        length += 1
    return length


def _padded(lm: LoadedLM, sequences: Sequence[list[int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Left-padded ids, their attention mask and position ids (counting from each row's start)."""
    width = max(len(ids) for ids in sequences)
    input_ids = torch.full((len(sequences), width), lm.tokenizer.pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, ids in enumerate(sequences):
        input_ids[row, width - len(ids) :] = torch.tensor(ids)
        mask[row, width - len(ids) :] = 1
    return input_ids, mask, (mask.cumsum(-1) - 1).clamp(min=0)


def _forward(lm: LoadedLM, input_ids, mask, positions, keep: int) -> torch.Tensor:
    """Log-probabilities at the last ``keep`` positions (a model whose forward cannot be
    asked for fewer logits computes them all, and they are sliced)."""
    inputs = {
        "input_ids": input_ids.to(lm.device),
        "attention_mask": mask.to(lm.device),
        "position_ids": positions.to(lm.device),
    }
    try:
        logits = lm.model(**inputs, logits_to_keep=keep).logits
    except TypeError:
        logits = lm.model(**inputs).logits
    return torch.log_softmax(logits[:, -keep:].float(), dim=-1)


def _score_next_tokens(
    lm: LoadedLM, batch: Sequence[tuple[int, list[int], int, list[int]]]
) -> list[list[float]]:
    """Per row: the shared prefix's log-probability plus each answer's last token's."""
    input_ids, _, _ = padded = _padded(lm, [ids for _, ids, _, _ in batch])
    keep = max(prefix for _, _, prefix, _ in batch) + 1
    logprobs = _forward(lm, *padded, keep=keep)
    width, values = input_ids.shape[1], []
    for row, (_, _, prefix, answers) in enumerate(batch):
        shared = sum(
            float(logprobs[row, keep - prefix + j - 1, input_ids[row, width - prefix + j]])
            for j in range(prefix)
        )
        values.append([shared + float(logprobs[row, -1, token]) for token in answers])
    return values


def _score_rows(lm: LoadedLM, batch: Sequence[tuple[int, list[int], int]]) -> list[float]:
    input_ids, mask, positions = _padded(lm, [ids for _, ids, _ in batch])
    width = input_ids.shape[1]
    keep = max(length for _, _, length in batch) + 1
    # position width - keep + j predicts token width - keep + j + 1; the last logit predicts nothing
    logprobs = _forward(lm, input_ids, mask, positions, keep)[:, :-1]
    targets = input_ids[:, width - keep + 1 :].to(lm.device)
    picked = logprobs.gather(-1, targets[..., None])[..., 0]
    return [float(picked[row, keep - 1 - length :].sum()) for row, (_, _, length) in enumerate(batch)]
