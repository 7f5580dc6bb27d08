"""Second-moment statistics of an MLP's keys, C = E[k kᵀ], computed once and kept on disk.

ROME and MEMIT weigh their updates by C⁻¹ so that keys the layer sees often change little.
C comes from running the model over a local text corpus (``EDITING_STATS_CORPUS``: one
document per line, or JSONL with a ``text`` field) and is cached in ``EDITING_STATS_DIR``
per model, layer, corpus content and token budget. Identity statistics (C = I) are used
only when the hyperparameters say ``"stats": "identity"``: they make the edit cruder and
must be a deliberate choice, so a missing corpus is an error, not a silent fallback.

Within a process the loaded (regularised) moments and the corpus digest are kept too, keyed
by the files' size and modification time: an edit then costs no disk read of C (the size
of the layer's width squared, 160 MB per layer for GPT-2 XL) and no hash of the corpus.
``CACHE`` counts corpus passes and file reads, so tests and benchmarks can see both.

A document longer than ``stats_max_length`` tokens keeps its end (the ROME reference's
``layer_stats`` keeps its beginning). That is what the statistics have always been computed
from: the shared tokenizer used to be set to truncate on the left by the generation of the
context templates, which runs before them; the side is now explicit.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from workers.lm.architectures import get_module, module_name, weight_in_out
from workers.lm.loading import LoadedLM
from workers.lm.tokens import tokenized

from .hparams import LocatedHparams

log = logging.getLogger(__name__)
STATS_FORMAT = 1


class StatisticsUnavailable(RuntimeError):
    """No corpus is configured and identity statistics were not chosen."""


@dataclass
class MomentCache:
    """Moments and corpus digests already read in this process, and how often each cost was paid."""

    corpus_passes: int = 0  # forward passes over a corpus (one per ``_compute``, any number of layers)
    file_reads: int = 0  # cache files loaded from disk
    digests: dict[tuple, str] = field(default_factory=dict)  # (corpus, size, mtime) -> sha256
    moments: dict[tuple, torch.Tensor] = field(default_factory=dict)  # (file, size, mtime, ridge, device)

    def clear(self) -> None:
        self.digests.clear()
        self.moments.clear()


CACHE = MomentCache()


def stats_settings() -> tuple[str | None, Path]:
    """(corpus file, cache directory) from the settings."""
    from django.conf import settings

    return settings.EDITING_STATS_CORPUS or None, Path(settings.EDITING_STATS_DIR)


def second_moments(lm: LoadedLM, layers: Sequence[int], hp: LocatedHparams) -> dict[int, torch.Tensor]:
    """C per layer (float32, on the model's device), regularised by ``stats_ridge``."""
    width = weight_in_out(get_module(lm.model, module_name(lm.model, "mlp_out", layers[0]))).shape[0]
    if hp.stats == "identity":
        return {layer: torch.eye(width, device=lm.device) for layer in layers}
    corpus, directory = stats_settings()
    corpus = hp.stats_corpus or corpus
    if not corpus or not Path(corpus).is_file():
        raise StatisticsUnavailable(
            f"{hp.method} needs second-moment statistics of the layer inputs: set "
            f"EDITING_STATS_CORPUS to a local text file (now {corpus!r}), or choose identity "
            'statistics with "stats": "identity" in the hyperparameters.'
        )
    digest = _corpus_digest(Path(corpus))
    paths = {layer: _cache_path(directory, lm, layer, digest, hp.stats_tokens) for layer in layers}
    missing = [layer for layer, path in paths.items() if not path.is_file()]
    if missing:
        computed = _compute(lm, missing, Path(corpus), hp)
        for layer, (moment, count) in computed.items():
            _save(
                paths[layer], moment, count, {"model": lm.spec.source, "layer": layer, "corpus": str(corpus)}
            )
    ridge = hp.stats_ridge
    return {layer: _loaded_moment(path, ridge, lm.device) for layer, path in paths.items()}


def _loaded_moment(path: Path, ridge: float, device: torch.device) -> torch.Tensor:
    """C from its cache file, regularised, read once per process (callers must not modify it)."""
    key = (str(path), *_file_version(path), ridge, str(device))
    if key not in CACHE.moments:
        moment = torch.load(path, map_location="cpu", weights_only=True)["moment"].to(device)
        CACHE.file_reads += 1
        if ridge:
            moment = moment + ridge * moment.diagonal().mean() * torch.eye(len(moment), device=device)
        CACHE.moments[key] = moment
    return CACHE.moments[key]


def _file_version(path: Path) -> tuple[int, int]:
    """(size, modification time): a rewritten file is a new version."""
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


def _cache_path(directory: Path, lm: LoadedLM, layer: int, digest: str, tokens: int) -> Path:
    name = module_name(lm.model, "mlp_out", layer)
    return directory / lm.spec.tag / f"{name}-{digest[:12]}-{tokens}.pt"


@torch.no_grad()
def _compute(
    lm: LoadedLM, layers: Sequence[int], corpus: Path, hp: LocatedHparams
) -> dict[int, tuple[torch.Tensor, int]]:
    """One pass over the corpus collecting Σ k kᵀ at every requested layer."""
    modules = {layer: get_module(lm.model, module_name(lm.model, "mlp_out", layer)) for layer in layers}
    sums: dict[int, torch.Tensor] = {}
    masks: list[torch.Tensor] = []
    handles = []
    for layer, module in modules.items():

        def accumulate(_module, args, layer=layer):
            keys = args[0][masks[-1]].float()
            sums[layer] = sums.get(layer, 0) + keys.T @ keys

        handles.append(module.register_forward_pre_hook(accumulate))
    count, budget = 0, hp.stats_tokens
    max_length = min(hp.stats_max_length, lm.max_positions)
    try:
        for batch in _batches(_texts(corpus), hp.stats_batch_size):
            # a long document keeps its end: see the module docstring
            inputs = tokenized(lm.tokenizer, batch, limit=max_length, cut="left", pad="right")
            mask = inputs.attention_mask.to(lm.device)
            masks.append(mask.bool())
            lm.model(input_ids=inputs.input_ids.to(lm.device), attention_mask=mask, use_cache=False)
            count += int(masks[-1].sum())
            if count >= budget:
                break
    finally:
        for handle in handles:
            handle.remove()
    CACHE.corpus_passes += 1
    if not count:
        raise StatisticsUnavailable(f"{corpus}: the statistics corpus has no text.")
    log.info("second moments of %s at layers %s from %d tokens", lm.name, layers, count)
    return {layer: ((sums[layer] / count).cpu(), count) for layer in layers}


def _texts(corpus: Path) -> Iterator[str]:
    with corpus.open(encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            if corpus.suffix == ".jsonl":
                line = str(json.loads(line).get("text", "")).strip()
            if line:
                yield line


def _batches(texts: Iterator[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for text in texts:
        batch.append(text)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _corpus_digest(path: Path) -> str:
    """The corpus file's sha256, hashed once per process and version of the file."""
    key = (str(path.resolve()), *_file_version(path))
    if key not in CACHE.digests:
        CACHE.digests[key] = _file_digest(path)
    return CACHE.digests[key]


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _save(path: Path, moment: torch.Tensor, count: int, about: dict) -> None:
    """Written to a temporary file and renamed: a crash never leaves half a cache file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as handle:
        torch.save({"format": STATS_FORMAT, "moment": moment, "count": count, **about}, handle)
    os.replace(handle.name, path)
