"""Which local model a name means: the ``MODEL_REGISTRY`` setting, a directory, or the HF cache.

Plain Python (no torch), so a command can check a name before it loads anything.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

DTYPES = ("auto", "float32", "float16", "bfloat16")


class ModelNotFound(LookupError):
    """The name is neither registered, nor a local directory, nor in the local HF cache."""


@dataclass(frozen=True)
class ModelSpec:
    name: str  # what provenance records: the registry name, or the path as given
    source: str  # a local directory, or a hub id to look up in the local cache only
    dtype: str = "auto"  # auto: float16/bfloat16 on CUDA, float32 on CPU
    registered: bool = False

    @property
    def tag(self) -> str:
        """A short, stable label for ids and file names (a path gets a hash of itself)."""
        if self.registered:
            return self.name
        base = Path(self.source.rstrip("/")).name or "model"
        digest = hashlib.sha1(self.source.encode()).hexdigest()[:6]  # noqa: S324 - a label
        return f"{base}-{digest}"


def model_registry() -> dict:
    """The ``MODEL_REGISTRY`` setting when Django is configured (benchmarks may run without it)."""
    from django.conf import settings

    return dict(settings.MODEL_REGISTRY) if settings.configured else {}


def resolve_model(name_or_path: str, registry: dict | None = None) -> ModelSpec:
    """A registered name, else an existing directory, else a hub id for the local cache."""
    if not name_or_path or not name_or_path.strip():
        raise ModelNotFound("No model given: pass a name from MODEL_REGISTRY or a local directory.")
    registry = model_registry() if registry is None else registry
    entry = registry.get(name_or_path)
    if entry is not None:
        if isinstance(entry, str):
            entry = {"path": entry}
        path, dtype = entry.get("path"), entry.get("dtype", "auto")
        if not path:
            raise ModelNotFound(f"MODEL_REGISTRY[{name_or_path!r}] has no 'path'.")
        if dtype not in DTYPES:
            raise ModelNotFound(f"MODEL_REGISTRY[{name_or_path!r}].dtype must be one of {', '.join(DTYPES)}.")
        return ModelSpec(name=name_or_path, source=str(path), dtype=dtype, registered=True)
    if os.path.isdir(name_or_path):
        return ModelSpec(name=name_or_path, source=os.path.abspath(name_or_path))
    if name_or_path.startswith(("/", ".", "~")) or name_or_path.count("/") > 1:
        raise ModelNotFound(f"{name_or_path}: no such directory, and not a name in MODEL_REGISTRY.")
    return ModelSpec(name=name_or_path, source=name_or_path)  # a hub id: the local cache only


def model_cache_dir() -> str | None:
    """``MODEL_CACHE_DIR`` when set: where hub ids are looked up (else the HF default cache)."""
    from django.conf import settings

    return getattr(settings, "MODEL_CACHE_DIR", None) if settings.configured else None
