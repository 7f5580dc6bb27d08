"""The interface every continuation generator implements.

A backend takes a prefix (the human-written sentences), a nucleus-sampling ``p`` (0 means
greedy) and a seed, and returns the machine-written continuation. The RoFT pipeline
(``workers.generation.continuations``) and the demo call only this interface, so a
Hugging Face model and the demo's small model plug in the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class ContinuationRequest:
    prefix: str
    p: float
    seed: int
    max_new_tokens: int = 160
    temperature: float = 1.0
    top_k: int = 0  # 0: no top-k cut


@dataclass(frozen=True)
class Continuation:
    text: str
    model: str  # what wrote it (registry name or path)
    decoding: dict = field(default_factory=dict)  # the parameters as applied
    seed: int = 0


class ContinuationBackend(Protocol):
    name: str

    def continue_texts(self, requests: Sequence[ContinuationRequest]) -> list[Continuation]:
        """One continuation per request, in order (batched where the backend can)."""


BACKEND_FACTORIES: dict[str, Callable[[], ContinuationBackend]] = {}


def register_backend(name: str, factory: Callable[[], ContinuationBackend]) -> None:
    """Make a backend loadable by name (the demo's model registers itself as ``demo``)."""
    BACKEND_FACTORIES[name] = factory


def load_backend(name: str) -> ContinuationBackend:
    """A registered backend by name; any other name is a Hugging Face model.

    The other names go to ``workers.generation.hf_backend`` (imported here, not at module
    level, because it needs torch): a ``MODEL_REGISTRY`` name, a local directory, or a hub
    id already in the local cache. ``ValueError`` when none of these fits.
    """
    factory = BACKEND_FACTORIES.get(name)
    if factory is not None:
        return factory()
    from workers.lm.registry import ModelNotFound

    from .hf_backend import huggingface_backend

    try:
        return huggingface_backend(name)
    except ModelNotFound as exc:
        known = ", ".join(sorted(BACKEND_FACTORIES)) or "none"
        raise ValueError(f"Unknown generator {name!r}: {exc} Registered backends: {known}.") from None
