"""Batched, seeded sampling where every row keeps its own random stream.

Each request carries its own seed and sampling settings (nucleus p, top-k, temperature;
p = 0 is greedy). The model runs the batch in one ``generate`` call in greedy mode, and a
logits processor draws each row's next token from that row's own generator, so a request
gives the same text alone or in any batch: the seed recorded in provenance reproduces it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import torch
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList

from .loading import LoadedLM


@dataclass(frozen=True)
class Sampling:
    top_p: float = 1.0  # nucleus mass kept; 0 means greedy
    top_k: int = 0  # 0: no top-k cut
    temperature: float = 1.0

    @property
    def greedy(self) -> bool:
        return self.top_p <= 0 or self.temperature <= 0

    def as_dict(self) -> dict:
        """The decoding parameters as provenance records them."""
        if self.greedy:
            return {"do_sample": False, "top_p": 0.0}
        return {"do_sample": True, **asdict(self)}


@dataclass(frozen=True)
class GenerationRequest:
    prompt: str
    seed: int
    sampling: Sampling = Sampling()
    max_new_tokens: int = 100


@dataclass(frozen=True)
class Generated:
    text: str  # the new text only, without the prompt
    new_tokens: int


class RowSampler(LogitsProcessor):
    """Per row: temperature, top-k, top-p, then one draw from the row's own generator.

    The chosen token is left as the only finite score, so greedy selection picks it;
    greedy rows pass through untouched.
    """

    def __init__(self, samplings: Sequence[Sampling], seeds: Sequence[int], device: torch.device):
        self.samplings = list(samplings)
        self.generators = [
            None if sampling.greedy else torch.Generator(device=device).manual_seed(int(seed))
            for sampling, seed in zip(samplings, seeds, strict=True)
        ]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        out = scores.clone()
        for row, (sampling, generator) in enumerate(zip(self.samplings, self.generators, strict=True)):
            if generator is None:
                continue
            probs = nucleus_probabilities(scores[row].float(), sampling)
            token = torch.multinomial(probs, 1, generator=generator)
            out[row] = torch.finfo(out.dtype).min
            out[row, token] = 0
        return out


def nucleus_probabilities(logits: torch.Tensor, sampling: Sampling) -> torch.Tensor:
    """The sampling distribution after temperature, top-k and top-p (at least one token kept)."""
    logits = logits / sampling.temperature
    if sampling.top_k and sampling.top_k < logits.numel():
        kth = torch.topk(logits, sampling.top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if sampling.top_p < 1.0:
        sorted_probs, order = torch.sort(probs, descending=True)
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
        sorted_probs = sorted_probs.masked_fill(before >= sampling.top_p, 0.0)
        probs = torch.zeros_like(probs).scatter(0, order, sorted_probs)
    return probs / probs.sum()


@torch.no_grad()
def generate_texts(
    lm: LoadedLM, requests: Sequence[GenerationRequest], *, batch_size: int = 8
) -> list[Generated]:
    """One generation per request, in order, ``batch_size`` rows per forward pass."""
    results: list[Generated] = []
    for start in range(0, len(requests), batch_size):
        results.extend(_generate_batch(lm, requests[start : start + batch_size]))
    return results


def _generate_batch(lm: LoadedLM, batch: Sequence[GenerationRequest]) -> list[Generated]:
    tokenizer = lm.tokenizer
    longest = lm.new_tokens_allowed(max(r.max_new_tokens for r in batch))
    tokenizer.padding_side, tokenizer.truncation_side = "left", "left"
    inputs = tokenizer(
        [r.prompt for r in batch],
        return_tensors="pt",
        padding=True,
        truncation=True,
        max_length=lm.max_positions - longest,  # a long prompt loses its beginning
    ).to(lm.device)
    config = GenerationConfig(
        max_new_tokens=longest,
        do_sample=False,
        num_beams=1,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=lm.model.generation_config.eos_token_id or tokenizer.eos_token_id,
    )
    sampler = RowSampler([r.sampling for r in batch], [r.seed for r in batch], lm.device)
    output = lm.model.generate(
        **inputs, generation_config=config, logits_processor=LogitsProcessorList([sampler])
    )
    new = output[:, inputs["input_ids"].shape[1] :]
    results = []
    for row, request in zip(new, batch, strict=True):
        tokens = _until_end(
            row[: request.max_new_tokens].tolist(), config.eos_token_id, tokenizer.pad_token_id
        )
        results.append(Generated(tokenizer.decode(tokens, skip_special_tokens=True), len(tokens)))
    return results


def _until_end(tokens: list[int], eos, pad) -> list[int]:
    stops = set(eos if isinstance(eos, list) else [eos]) | {pad}
    for index, token in enumerate(tokens):
        if token in stops:
            return tokens[:index]
    return tokens
