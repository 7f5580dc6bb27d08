"""Model editing: one module per method, applied to a loaded model and undone exactly.

Methods: ``none`` (the unedited control), ``ike`` (in-context: demonstrations in the
prompt, no weight change), ``ft`` (FT-L: one MLP fine-tuned within an L∞ bound, every target
token predicted at the prompt's end), ``ft_m`` (FT-M: the same with the target
teacher-forced), ``rome``
(a rank-one update of one MLP down projection), ``memit`` (several edits at once, spread
over a range of layers), ``mend`` (a trained editor network turns the edit's gradient
into a low-rank change of several MLP weights; ``train_mend`` trains it per model). Each
method module defines ``NAME``, ``system_name(lm)`` (the label its passages carry),
``touched_parameters(lm, hp)`` and ``apply(lm, requests, hp)``;
``workers.editing.base.edit_applied`` applies one and restores every touched weight bit
for bit on the way out.

This package's ``__init__``, ``requests`` and ``hparams`` are plain Python; the method
modules import torch and are loaded on demand by ``get_method``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

METHODS = ("none", "ike", "ft", "rome", "memit", "ft_m", "mend")


def get_method(name: str) -> ModuleType:
    """The method's module (imported now, with torch)."""
    if name not in METHODS:
        raise ValueError(f"Unknown editing method {name!r}; known: {', '.join(METHODS)}.")
    return importlib.import_module(f"workers.editing.{name}")
