"""Which local model a name means: the ``MODEL_REGISTRY`` setting, a directory, or the HF cache.

Plain Python (no torch), so a command can check a name before it loads anything.

A relative name is never a path from the worker's working directory (researchers would
probe, and load, the worker's own files): it is a registered name, a folder inside the model
roots (``ROFT_MODEL_ROOTS``), or a hub id looked up in the local cache only. While a
researcher's job runs, only the folders they may read count (their own and the shared one:
``model_folders``). Messages name what was given, never the worker's absolute paths
(``without_paths``).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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

    if not settings.configured:
        return {}
    registry = settings.MODEL_REGISTRY  # a JSON object: the settings refuse anything else
    return dict(registry) if isinstance(registry, dict) else {}


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
    if os.path.isabs(name_or_path):
        if os.path.isdir(name_or_path):
            return ModelSpec(name=name_or_path, source=os.path.normpath(name_or_path))
        raise ModelNotFound(f"{name_or_path}: no such directory, and not a name in MODEL_REGISTRY.")
    inside = in_model_roots(name_or_path)
    if inside is not None:
        return ModelSpec(name=name_or_path, source=inside)
    if name_or_path.startswith((".", "~")) or name_or_path.count("/") > 1 or ".." in name_or_path.split("/"):
        raise ModelNotFound(
            f"{name_or_path}: not a name in MODEL_REGISTRY, the model folders or the local cache."
        )
    return ModelSpec(name=name_or_path, source=name_or_path)  # a hub id: the local cache only


def model_roots() -> list[str]:
    """``ROFT_MODEL_ROOTS`` when Django is configured: the folders relative names resolve in."""
    from django.conf import settings

    return (
        [os.path.normpath(root) for root in getattr(settings, "ROFT_MODEL_ROOTS", [])]
        if settings.configured
        else []
    )


# The top folders of the model roots that relative names may resolve in; None: all of them.
_READABLE_FOLDERS: ContextVar[frozenset[str] | None] = ContextVar("readable_model_folders", default=None)


@contextmanager
def model_folders(readable: Iterable[str] | None) -> Iterator[None]:
    """Within this block a relative name resolves only in ``<root>/<folder>/`` for these folders
    (a researcher's job: ``annotation.services.jobs.worker_folders``); None: anywhere in the roots."""
    token = _READABLE_FOLDERS.set(None if readable is None else frozenset(readable))
    try:
        yield
    finally:
        _READABLE_FOLDERS.reset(token)


def in_model_roots(name: str) -> str | None:
    """The folder ``name`` (relative) means inside a model root, when there is one (and, in a
    researcher's job, only inside a folder they may read)."""
    if os.path.isabs(name) or ".." in name.split("/") or name.startswith("~"):
        return None
    readable = _READABLE_FOLDERS.get()
    for root in model_roots():
        candidate = os.path.normpath(os.path.join(root, name))
        prefix = root.rstrip("/") + "/"
        if not candidate.startswith(prefix):
            continue
        if readable is not None and candidate[len(prefix) :].split("/")[0] not in readable:
            continue
        if os.path.isdir(candidate):
            return candidate
    return None


def local_source(spec: ModelSpec) -> str:
    """The absolute folder to load ``spec`` from: its directory, or a hub id's snapshot in the
    local cache (never a folder of that name in the working directory). ``ModelNotFound``
    when a hub id is not cached."""
    if spec.registered or os.path.isabs(spec.source):
        return spec.source
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(spec.source, local_files_only=True, cache_dir=model_cache_dir())
    except (OSError, ValueError) as exc:  # not cached, or not a hub id at all
        raise ModelNotFound(
            f"{spec.name}: not a name in MODEL_REGISTRY, the model folders or the local cache "
            f"({type(exc).__name__})."
        ) from None


ABSOLUTE_PATH = re.compile(r"(?<![\w.])/(?:[\w.@+-]+/)*([\w.@+-]+)")


def without_paths(text: str, keep: tuple[str, ...] = ()) -> str:
    """``text`` with every absolute path cut to its last part (``…/name``), except those in
    ``keep`` (what the researcher gave): a worker's error never shows its own folders."""

    def cut(match: re.Match[str]) -> str:
        path = match.group(0)
        return (
            path
            if any(path == given or path.startswith(given.rstrip("/") + "/") for given in keep)
            else f"…/{match.group(1)}"
        )

    return ABSOLUTE_PATH.sub(cut, text)


def model_cache_dir() -> str | None:
    """``MODEL_CACHE_DIR`` when set: where hub ids are looked up (else the HF default cache)."""
    from django.conf import settings

    return getattr(settings, "MODEL_CACHE_DIR", None) if settings.configured else None
