"""Token positions the editors need: the subject's last token, and where a target starts.

Texts are right-padded here (every row starts at position 0) and located through the fast
tokenizer's character offsets, so a subject or target is found whatever precedes it. The
padding and the truncation are done by hand (``workers.lm.tokens``): the tokenizer is
shared with the other jobs of the worker and is never changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from workers.lm.loading import LoadedLM
from workers.lm.scoring import token_log_probs
from workers.lm.tokens import kept_positions, padded, padding_id


@dataclass
class Encoded:
    inputs: dict  # input_ids and attention_mask on the model's device
    offsets: torch.Tensor  # (batch, tokens, 2) character spans; (0, 0) for padding
    lengths: torch.Tensor  # real tokens per row

    @property
    def input_ids(self) -> torch.Tensor:
        return self.inputs["input_ids"]

    def last_token_before(self, ends: Sequence[int]) -> torch.Tensor:
        """Per row, the index of the last token starting before character ``ends[row]``."""
        positions = []
        for row, end in enumerate(ends):
            starts = self.offsets[row, : self.lengths[row], 0]
            candidates = torch.nonzero(starts < end).flatten()
            positions.append(int(candidates[-1]) if len(candidates) else 0)
        return torch.tensor(positions, device=self.input_ids.device)

    def tokens_after(self, starts: Sequence[int | None]) -> torch.Tensor:
        """(batch, tokens) mask of the real tokens that end after character ``starts[row]``."""
        mask = torch.zeros(self.input_ids.shape, dtype=torch.bool)
        for row, start in enumerate(starts):
            if start is not None:
                length = int(self.lengths[row])
                mask[row, :length] = self.offsets[row, :length, 1] > start
        return mask.to(self.input_ids.device)


def encode(lm: LoadedLM, texts: Sequence[str]) -> Encoded:
    """Right-padded batch with character offsets; long texts lose their beginning, never their end."""
    tokenizer = lm.tokenizer
    rows, spans = [], []
    for text in texts:
        encoded = tokenizer(text, return_offsets_mapping=True)
        kept = kept_positions(
            encoded["input_ids"], lm.max_positions, cut="left", special_ids=tokenizer.all_special_ids
        )
        rows.append([encoded["input_ids"][p] for p in kept])
        spans.append([encoded["offset_mapping"][p] for p in kept])
    batch = padded(rows, pad_id=padding_id(tokenizer), side="right")
    offsets = torch.zeros((*batch.input_ids.shape, 2), dtype=torch.long)
    for row, span in enumerate(spans):
        offsets[row, : len(span)] = torch.tensor(span, dtype=torch.long).reshape(-1, 2)
    inputs = {
        "input_ids": batch.input_ids.to(lm.device),
        "attention_mask": batch.attention_mask.to(lm.device),
    }
    return Encoded(inputs=inputs, offsets=offsets, lengths=batch.attention_mask.sum(1))


def target_log_probs(logits: torch.Tensor, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per row, the mean log-probability of the masked tokens given everything before them
    (differentiable: the editors' losses; the metrics score through ``workers.lm.scoring``)."""
    wanted = mask[:, 1:].float()
    return (token_log_probs(logits, input_ids) * wanted).sum(1) / wanted.sum(1).clamp(min=1)
