"""Applying an edit and undoing it exactly.

Before a method runs, every weight it may touch is copied; on the way out those copies are
written back (``copy_``: the same bits, not a reverse update), so the next edit, method or
job starts from the original model.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from workers.lm.loading import LoadedLM

from . import get_method
from .hparams import Hparams
from .requests import EditRequest


@dataclass
class AppliedEdit:
    method: str
    system: str  # what wrote the passages: ROME, MEMIT, FT_L, IKE, or the model's name
    prefix: str = ""  # text put before every prompt (IKE's demonstrations); empty for weight edits
    details: dict = field(default_factory=dict)  # layers, norms, losses: what the edit did


class WeightSnapshot:
    """Copies of named parameters, written back bit for bit by ``restore``."""

    def __init__(self, model: torch.nn.Module, names: Sequence[str]):
        parameters = dict(model.named_parameters())
        unknown = [name for name in names if name not in parameters]
        if unknown:
            raise KeyError(f"The model has no parameter {unknown[0]!r}.")
        self.saved = {name: (parameters[name], parameters[name].detach().clone()) for name in names}

    def restore(self) -> None:
        with torch.no_grad():
            for parameter, copy in self.saved.values():
                parameter.copy_(copy)


def apply_edit(lm: LoadedLM, method: str, requests: Sequence[EditRequest], hparams: Hparams) -> AppliedEdit:
    """Apply and keep the edit (``edit_model`` saves the result). Prefer ``edit_applied``."""
    return get_method(method).apply(lm, list(requests), hparams)


@contextmanager
def edit_applied(
    lm: LoadedLM, method: str, requests: Sequence[EditRequest], hparams: Hparams
) -> Iterator[AppliedEdit]:
    """The model edited inside the block, restored exactly afterwards (even on errors)."""
    module = get_method(method)
    snapshot = WeightSnapshot(lm.model, module.touched_parameters(lm, hparams))
    try:
        yield module.apply(lm, list(requests), hparams)
    finally:
        snapshot.restore()
