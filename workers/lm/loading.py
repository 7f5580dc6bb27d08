"""Load a causal LM and its tokenizer offline, on CUDA when there is one.

Nothing is ever downloaded: ``local_files_only`` is always set, so a hub id only resolves
when its files are already in the local Hugging Face cache.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol, cast

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    GenerationConfig,
    GenerationMixin,
    LogitsProcessorList,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from .registry import ModelNotFound, ModelSpec, local_source, model_cache_dir, resolve_model, without_paths

log = logging.getLogger(__name__)


class TextGenerator(Protocol):
    """What ``workers.lm.generation`` calls: ``generate`` returning the token ids (prompt and
    new tokens) as it does when no dictionary output is asked for."""

    def generate(
        self,
        inputs: torch.Tensor,
        *,
        attention_mask: torch.Tensor,
        generation_config: GenerationConfig,
        logits_processor: LogitsProcessorList,
    ) -> torch.Tensor: ...


@dataclass
class LoadedLM:
    """A model ready for generation and scoring: weights on their device. The tokenizer is
    shared by every job of the process: callers pad and truncate by hand, on the side they
    need (``workers.lm.tokens``), and never change it."""

    spec: ModelSpec
    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    device: torch.device
    dtype: torch.dtype

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def generator(self) -> TextGenerator:
        """The model as a text generator (every causal LM is one; its static type does not say so)."""
        if not isinstance(self.model, GenerationMixin):
            raise TypeError(f"{self.name} cannot generate text.")
        return cast(TextGenerator, self.model)

    @property
    def num_layers(self) -> int:
        return int(self.model.config.num_hidden_layers)

    @property
    def max_positions(self) -> int:
        config = self.model.config
        for key in ("n_positions", "max_position_embeddings", "n_ctx"):
            value = getattr(config, key, None)
            if isinstance(value, int) and value > 0:
                return value
        return 2048

    def new_tokens_allowed(self, wanted: int) -> int:
        """At most half the model's positions go to new text; the prompt keeps the other half."""
        return max(1, min(wanted, self.max_positions // 2))


def pick_device(device: str | None = None) -> torch.device:
    if device:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def pick_dtype(requested: str, device: torch.device) -> torch.dtype:
    """The registry's dtype; ``auto`` is half precision on CUDA (bf16 where supported), fp32 on CPU."""
    if requested != "auto":
        return getattr(torch, requested)
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


def load_lm(name_or_path: str, *, device: str | None = None, registry: dict | None = None) -> LoadedLM:
    """Load by registry name, local directory or cached hub id; ``ModelNotFound`` otherwise."""
    spec = resolve_model(name_or_path, registry)
    target = pick_device(device)
    dtype = pick_dtype(spec.dtype, target)
    source = local_source(spec)
    options: dict = {"local_files_only": True}
    cache_dir = model_cache_dir()
    if cache_dir:
        options["cache_dir"] = cache_dir
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, **options)
        model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **options)
    except (OSError, ValueError) as exc:
        reason = without_paths(str(exc), keep=(name_or_path,))
        raise ModelNotFound(f"{spec.name}: cannot load it offline ({reason}).") from exc
    model.to(target).eval()  # type: ignore[arg-type]  # mypy misreads transformers' @wraps on ``to``
    if target.type == "cpu":
        use_cpu_threads()
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"  # for direct callers; the workers pad by hand (``tokens``)
    log.info("loaded %s from %s on %s as %s", spec.name, spec.source, target, dtype)
    return LoadedLM(spec=spec, model=model, tokenizer=tokenizer, device=target, dtype=dtype)


def use_cpu_threads() -> None:
    """PyTorch's intra-op threads set to ``MODEL_CPU_THREADS`` when it is set (0: left as they are).

    With a thread per core on cores that are busy with other work, every parallelised
    operation waits at its barrier for a descheduled thread: on 2 shared cores that made a
    ROME edit 4–10× and batch-1 generation 11× slower (``bench/workers.py --threads 1,2``).
    """
    from django.conf import settings

    threads = getattr(settings, "MODEL_CPU_THREADS", 0) if settings.configured else 0
    if threads:
        torch.set_num_threads(threads)


_HELD: dict[tuple, LoadedLM] = {}


def shared_lm(name_or_path: str, *, device: str | None = None) -> LoadedLM:
    """The model this worker process holds, loaded once and reused by the next job.

    A GPU worker keeps one model at a time: asking for another releases the first. Reuse
    is safe because every edit is undone bit for bit before the next one.
    """
    spec = resolve_model(name_or_path)
    key = (spec, str(pick_device(device)))
    if key not in _HELD:
        release_shared_lms()
        _HELD[key] = load_lm(name_or_path, device=device)
    return _HELD[key]


def release_shared_lms() -> None:
    _HELD.clear()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


__all__ = [
    "LoadedLM",
    "ModelNotFound",
    "load_lm",
    "pick_device",
    "pick_dtype",
    "release_shared_lms",
    "shared_lm",
]
