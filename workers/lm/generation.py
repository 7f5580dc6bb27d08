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
from .tokens import decoded, tokenized


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
    token_ids: tuple[int, ...] = ()  # the new tokens (to decode with the prompt's, see editing.templates)


class RowSampler(LogitsProcessor):
    """Per row: temperature, top-k, top-p, then one draw from the row's own generator.

    The distributions are computed for the whole batch at once; only the uniform number
    each row draws comes from its own generator (inverse-CDF sampling). The chosen token is
    left as the only finite score, so greedy selection picks it; greedy rows pass untouched.
    """

    def __init__(self, samplings: Sequence[Sampling], seeds: Sequence[int], device: torch.device):
        self.sampled = [row for row, sampling in enumerate(samplings) if not sampling.greedy]
        chosen = [samplings[row] for row in self.sampled]
        self.temperature = torch.tensor([s.temperature for s in chosen], device=device)
        self.top_k = torch.tensor([s.top_k for s in chosen], device=device)
        self.top_p = torch.tensor([s.top_p for s in chosen], device=device)
        self.generators = [
            torch.Generator(device=device).manual_seed(int(seeds[row])) for row in self.sampled
        ]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        if not self.sampled:
            return scores
        rows = torch.tensor(self.sampled, device=scores.device)
        probs = nucleus_probabilities(scores[rows].float(), self.temperature, self.top_k, self.top_p)
        draws = torch.stack([torch.rand((), generator=g, device=scores.device) for g in self.generators])
        cdf = probs.cumsum(dim=-1)
        tokens = torch.searchsorted(cdf, (draws * cdf[:, -1])[:, None], right=True).clamp(
            max=probs.shape[-1] - 1
        )
        out = scores.clone()
        out[rows] = torch.finfo(out.dtype).min
        out[rows[:, None], tokens] = 0
        return out


def nucleus_probabilities(
    logits: torch.Tensor, temperature: torch.Tensor, top_k: torch.Tensor, top_p: torch.Tensor
) -> torch.Tensor:
    """(rows, vocab) sampling distributions after each row's temperature, top-k (0: none) and
    top-p (the smallest set of tokens whose mass reaches p; at least one token is kept)."""
    logits = logits / temperature[:, None]
    sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
    ranks = torch.arange(logits.shape[-1], device=logits.device)[None, :]
    limit = torch.where(top_k > 0, top_k, logits.shape[-1])[:, None]
    sorted_probs = torch.softmax(sorted_logits.masked_fill(ranks >= limit, float("-inf")), dim=-1)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    cut = (before >= top_p[:, None]) & (top_p[:, None] < 1.0)
    sorted_probs = sorted_probs.masked_fill(cut, 0.0)
    probs = torch.zeros_like(sorted_probs).scatter(-1, order, sorted_probs)
    return probs / probs.sum(dim=-1, keepdim=True)


@torch.no_grad()
def generate_texts(
    lm: LoadedLM, requests: Sequence[GenerationRequest], *, batch_size: int = 8, min_new_tokens: int = 0
) -> list[Generated]:
    """One generation per request, in order, ``batch_size`` rows per forward pass.

    ``min_new_tokens`` holds the end-of-text token back that long (the benchmark uses it to
    measure full-length rows).
    """
    results: list[Generated] = []
    for start in range(0, len(requests), batch_size):
        results.extend(_generate_batch(lm, requests[start : start + batch_size], min_new_tokens))
    return results


def _generate_batch(lm: LoadedLM, batch: Sequence[GenerationRequest], min_new_tokens: int) -> list[Generated]:
    tokenizer = lm.tokenizer
    longest = lm.new_tokens_allowed(max(r.max_new_tokens for r in batch))
    # padded on the left, so every row continues from the right edge; a long prompt loses its beginning
    prompts = [r.prompt for r in batch]
    inputs = tokenized(tokenizer, prompts, limit=lm.max_positions - longest, cut="left", pad="left")
    config = GenerationConfig(
        max_new_tokens=longest,
        min_new_tokens=min(min_new_tokens, longest),
        do_sample=False,
        num_beams=1,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=lm.model.generation_config.eos_token_id or tokenizer.eos_token_id,
    )
    sampler = RowSampler([r.sampling for r in batch], [r.seed for r in batch], lm.device)
    output = lm.generator.generate(
        inputs.input_ids.to(lm.device),
        attention_mask=inputs.attention_mask.to(lm.device),
        generation_config=config,
        logits_processor=LogitsProcessorList([sampler]),
    )
    new = output[:, inputs.input_ids.shape[1] :]
    results = []
    for row, request in zip(new, batch, strict=True):
        tokens = _until_end(
            row[: request.max_new_tokens].tolist(), config.eos_token_id, tokenizer.pad_token_id
        )
        text = decoded(tokenizer, tokens)
        results.append(Generated(text, len(tokens), tuple(tokens)))
    return results


def _until_end(tokens: list[int], eos, pad) -> list[int]:
    stops = set(eos if isinstance(eos, list) else [eos]) | {pad}
    for index, token in enumerate(tokens):
        if token in stops:
            return tokens[:index]
    return tokens
