"""Log-probabilities of targets after a prompt under a causal LM, batched: the one scorer.

The LLM rater scores its closed answers with it (the sum over an answer's tokens) and the
editing metrics their new and true targets (the mean per token); the reduction is the
caller's, the scorer returns every target token's log-probability.

A target follows its prompt after a space, and its tokens are those of the whole text
``prompt + " " + target`` after the part that every target's text shares with the prompt
tokenized alone (tokenizing the target alone can differ: a SentencePiece tokenizer adds a
space mark of its own, and a merge may cross the boundary). When a prompt's targets differ
only in their last token (scale points, letters, yes / no, one-token cities) the prompt is
one row and one next-token distribution scores them all; otherwise every
(prompt, target) pair is one row. A prompt longer than the model's positions loses its
beginning (its leading special tokens and the target stay). Rows are padded on the side
the caller names, by hand: the result is the same either way, the shared tokenizer is
never changed, and only the positions that predict a target token get logits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from transformers import PreTrainedTokenizerBase

from .loading import LoadedLM
from .tokens import Padded, Side, padded, padding_id, truncated


@dataclass(frozen=True)
class TargetLogProbs:
    """One prompt's targets: per target, the log-probability of each of its tokens, in order;
    ``truncated``: how many prompt tokens were cut off the front to fit the model."""

    tokens: tuple[tuple[float, ...], ...]
    truncated: int = 0

    def sums(self) -> tuple[float, ...]:
        """Per target, the log-probability of the whole target."""
        return tuple(sum(values) for values in self.tokens)

    def means(self) -> tuple[float, ...]:
        """Per target, the mean log-probability per token (long and short targets compare)."""
        return tuple(sum(values) / len(values) for values in self.tokens)


@dataclass(frozen=True)
class _Row:
    """One forward row: ``ids`` end with ``in_place`` target tokens read where they stand;
    ``next_tokens``: the tokens scored after the row's last token (one per target sharing it)."""

    request: int
    targets: tuple[int, ...]  # which of the request's targets the row scores
    ids: list[int]
    in_place: int
    next_tokens: tuple[int, ...] = ()


@torch.no_grad()
def score_targets(
    lm: LoadedLM,
    requests: Sequence[tuple[str, Sequence[str]]],
    *,
    batch_size: int = 8,
    padding_side: Side = "left",
) -> list[TargetLogProbs]:
    """For each (prompt, targets), every target token's log-probability, in order."""
    rows: list[_Row] = []
    truncated_tokens = [0] * len(requests)
    for index, (prompt, targets) in enumerate(requests):
        request_rows, truncated_tokens[index] = _rows(lm, index, prompt, targets)
        rows.extend(request_rows)
    scores: list[list[tuple[float, ...]]] = [[()] * len(targets) for _, targets in requests]
    for start in range(0, len(rows), batch_size):
        batch = rows[start : start + batch_size]
        for row, values in zip(batch, _score_batch(lm, batch, padding_side), strict=True):
            for target, value in zip(row.targets, values, strict=True):
                scores[row.request][target] = value
    return [TargetLogProbs(tuple(values), cut) for values, cut in zip(scores, truncated_tokens, strict=True)]


def _rows(lm: LoadedLM, index: int, prompt: str, targets: Sequence[str]) -> tuple[list[_Row], int]:
    """The rows that score one prompt's targets, and how many prompt tokens they cut off."""
    if not targets:
        return [], 0
    prompt_ids, target_ids = split_tokens(lm.tokenizer, prompt, targets)
    prefix = target_ids[0][:-1]
    if len({len(ids) for ids in target_ids}) == 1 and all(ids[:-1] == prefix for ids in target_ids):
        kept = _kept_prompt(lm, prompt_ids, target_ids[0])
        last = tuple(ids[-1] for ids in target_ids)
        row = _Row(index, tuple(range(len(targets))), kept + prefix, len(prefix), last)
        return [row], len(prompt_ids) - len(kept)
    rows, cut = [], 0
    for target, ids in enumerate(target_ids):
        kept = _kept_prompt(lm, prompt_ids, ids)
        cut = max(cut, len(prompt_ids) - len(kept))
        rows.append(_Row(index, (target,), kept + ids, len(ids)))
    return rows, cut


def _kept_prompt(lm: LoadedLM, prompt_ids: list[int], target_ids: list[int]) -> list[int]:
    """The prompt's tokens that fit before the whole target in the model's positions (the
    same whether the target's last token is read in place or predicted after the row)."""
    room = lm.max_positions - len(target_ids)
    return truncated(prompt_ids, room, cut="left", special_ids=lm.tokenizer.all_special_ids)


def split_tokens(
    tokenizer: PreTrainedTokenizerBase, prompt: str, targets: Sequence[str]
) -> tuple[list[int], list[list[int]]]:
    """The prompt's tokens and each target's, as the text ``prompt + " " + target`` is
    tokenized whole: a target's tokens are what follows the part every such text shares with
    the prompt, and every target keeps at least one token of its own."""
    prompt_ids = list(tokenizer(prompt)["input_ids"])
    whole = [list(tokenizer(f"{prompt} {target}")["input_ids"]) for target in targets]
    shared = len(prompt_ids)
    for ids in whole:
        shared = min(shared, _common_prefix(prompt_ids, ids), len(ids) - 1)
    return prompt_ids[:shared], [ids[shared:] for ids in whole]


def _common_prefix(first: list[int], second: list[int]) -> int:
    length = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        length += 1
    return length


def _score_batch(lm: LoadedLM, batch: Sequence[_Row], side: Side) -> list[list[tuple[float, ...]]]:
    """Per row, per target it scores: its tokens' log-probabilities."""
    if any(len(row.ids) <= row.in_place for row in batch):
        raise ValueError("A target needs at least one token before it to be scored.")
    inputs = padded([row.ids for row in batch], pad_id=padding_id(lm.tokenizer), side=side)
    ends = [offset + len(row.ids) for offset, row in zip(inputs.offsets, batch, strict=True)]
    # logits from the position before the earliest target token to the right edge
    first = min(end - row.in_place - 1 for end, row in zip(ends, batch, strict=True))
    logits = _forward(lm, inputs, keep=inputs.input_ids.shape[1] - first)
    picked = token_log_probs(logits, inputs.input_ids[:, first:].to(lm.device))
    values = []
    for index, (row, end) in enumerate(zip(batch, ends, strict=True)):
        in_place = tuple(picked[index, end - row.in_place - first - 1 : end - first - 1].tolist())
        if not row.next_tokens:
            values.append([in_place])
            continue
        following = torch.log_softmax(logits[index, end - first - 1].float(), dim=-1)
        values.append([(*in_place, value) for value in following[list(row.next_tokens)].tolist()])
    return values


def token_log_probs(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    """(rows, tokens - 1): the log-probability of each token after the first given the ones
    before it, from the logits at the positions of ``input_ids`` (differentiable)."""
    log_probs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    return log_probs.gather(-1, input_ids[:, 1:, None])[..., 0]


def _forward(lm: LoadedLM, inputs: Padded, *, keep: int) -> torch.Tensor:
    """Logits at the last ``keep`` positions (a model whose forward cannot be asked for fewer
    logits computes them all, and they are sliced)."""
    arguments = {
        "input_ids": inputs.input_ids.to(lm.device),
        "attention_mask": inputs.attention_mask.to(lm.device),
        "position_ids": inputs.position_ids.to(lm.device),
    }
    try:
        logits = lm.model(**arguments, logits_to_keep=keep).logits
    except TypeError:
        logits = lm.model(**arguments).logits
    return logits[:, -keep:]
