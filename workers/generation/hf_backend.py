"""The Hugging Face continuation backend: any local causal LM behind ``ContinuationBackend``."""

from __future__ import annotations

from collections.abc import Sequence

from workers.lm.generation import GenerationRequest, Sampling, generate_texts
from workers.lm.loading import LoadedLM, shared_lm

from .backend import Continuation, ContinuationRequest


class HuggingFaceBackend:
    """Continues prefixes with a local model, up to ``batch_size`` requests per forward pass.

    A request's p, temperature, top-k and seed apply to that request alone (each row has
    its own random stream), so one batch may mix nucleus values.
    """

    def __init__(self, lm: LoadedLM, *, batch_size: int = 64):
        self.lm = lm
        self.name = lm.name
        self.batch_size = batch_size

    def continue_texts(self, requests: Sequence[ContinuationRequest]) -> list[Continuation]:
        generation = [
            GenerationRequest(
                prompt=request.prefix,
                seed=request.seed,
                sampling=Sampling(top_p=request.p, top_k=request.top_k, temperature=request.temperature),
                max_new_tokens=self.lm.new_tokens_allowed(request.max_new_tokens),
            )
            for request in requests
        ]
        outputs = generate_texts(self.lm, generation, batch_size=self.batch_size)
        return [
            Continuation(
                text=output.text,
                model=self.name,
                decoding={**g.sampling.as_dict(), "max_new_tokens": g.max_new_tokens},
                seed=g.seed,
            )
            for output, g in zip(outputs, generation, strict=True)
        ]


def huggingface_backend(name_or_path: str, *, batch_size: int = 64) -> HuggingFaceBackend:
    """The backend for a registry name, a local directory or a cached hub id (loaded once per process)."""
    return HuggingFaceBackend(shared_lm(name_or_path), batch_size=batch_size)
