"""Truncating and padding token ids by hand, with the side chosen per call.

The tokenizer a worker loads is shared by every job the process runs (``shared_lm``), so
its ``padding_side`` and ``truncation_side`` are left as loaded: each caller says which side
it pads and cuts here instead. Truncation keeps a text's leading and trailing special
tokens (a BOS mark) and cuts its content, as the tokenizers' own truncation does.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

import torch
from transformers import PreTrainedTokenizerBase

Side = Literal["left", "right"]


def kept_positions(ids: Sequence[int], limit: int, *, cut: Side, special_ids: Collection[int]) -> list[int]:
    """The positions of ``ids`` kept when the text may hold ``limit`` tokens: the content loses
    its beginning (``cut="left"``) or its end, the special tokens at either edge stay."""
    if len(ids) <= limit:
        return list(range(len(ids)))
    lead = _run_length(ids, special_ids)
    trail = _run_length(ids[lead:][::-1], special_ids)
    room = max(0, limit - lead - trail)
    start = len(ids) - trail - room if cut == "left" else lead
    return [*range(lead), *range(start, start + room), *range(len(ids) - trail, len(ids))]


def truncated(ids: Sequence[int], limit: int, *, cut: Side, special_ids: Collection[int]) -> list[int]:
    """``ids`` cut to ``limit`` tokens (see ``kept_positions``)."""
    return [ids[p] for p in kept_positions(ids, limit, cut=cut, special_ids=special_ids)]


@dataclass(frozen=True)
class Padded:
    """A batch of sequences padded to one width; ``offsets``: where each row's first real token is."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    offsets: tuple[int, ...]

    @property
    def position_ids(self) -> torch.Tensor:
        """Each real token's position counted from its row's first real token (left padding
        would otherwise shift them)."""
        return (self.attention_mask.cumsum(-1) - 1).clamp(min=0)


def padded(sequences: Sequence[Sequence[int]], *, pad_id: int, side: Side) -> Padded:
    """The sequences padded with ``pad_id`` on ``side`` to the longest one's length."""
    width = max(len(ids) for ids in sequences)
    input_ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    offsets = []
    for row, ids in enumerate(sequences):
        start = width - len(ids) if side == "left" else 0
        input_ids[row, start : start + len(ids)] = torch.tensor(list(ids), dtype=torch.long)
        mask[row, start : start + len(ids)] = 1
        offsets.append(start)
    return Padded(input_ids, mask, tuple(offsets))


def tokenized(
    tokenizer: PreTrainedTokenizerBase, texts: Sequence[str], *, limit: int, cut: Side, pad: Side
) -> Padded:
    """The texts as one batch: each cut to ``limit`` tokens on ``cut``, padded on ``pad``."""
    special = tokenizer.all_special_ids
    rows = [truncated(tokenizer(text)["input_ids"], limit, cut=cut, special_ids=special) for text in texts]
    return padded(rows, pad_id=padding_id(tokenizer), side=pad)


def padding_id(tokenizer: PreTrainedTokenizerBase) -> int:
    """The id rows are padded with (``load_lm`` gives every tokenizer a pad token); its value
    never reaches a real token, the attention mask hides it."""
    pad = tokenizer.pad_token_id
    return pad if isinstance(pad, int) else 0


def decoded(tokenizer: PreTrainedTokenizerBase, ids: Sequence[int]) -> str:
    """The text of ``ids`` without special tokens (one sequence in, one text out)."""
    text = tokenizer.decode(list(ids), skip_special_tokens=True)
    return text if isinstance(text, str) else "".join(text)


def _run_length(ids: Sequence[int], special_ids: Collection[int]) -> int:
    length = 0
    while length < len(ids) and ids[length] in special_ids:
        length += 1
    return length
