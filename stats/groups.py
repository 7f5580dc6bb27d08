"""Grouping answers by their keys (system, question, p…): factorised codes, group indices and
the ``GroupMean`` every per-group figure is reported as (``stats.clustered``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .bootstrap import Interval
from .counting import integer_codes


@dataclass(frozen=True)
class GroupMean:
    key: tuple
    mean: float
    sd: float
    n: int
    ci: Interval | None


def group_index(*keys: Sequence | np.ndarray) -> tuple[list[tuple], np.ndarray]:
    """Distinct key tuples (sorted) and, per observation, the index of its tuple."""
    if not keys or len(keys[0]) == 0:
        return [], np.zeros(0, dtype=np.intp)
    codes, levels = [], []
    for key in keys:
        distinct, code = factorize(key)
        levels.append(distinct)
        codes.append(code)
    if len(keys) == 1:
        return [(plain(value),) for value in levels[0]], codes[0]
    combined = np.ravel_multi_index(codes, [len(level) for level in levels])
    present, index = factorize(combined)
    tuples = [
        tuple(plain(levels[k][i]) for k, i in enumerate(np.unravel_index(value, [len(lv) for lv in levels])))
        for value in present
    ]
    return tuples, index.ravel()


def factorize(values: Sequence | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and each value's index among them (the codes may be the
    array given, when it already holds codes from 0: read them, never write into them).

    Text (object arrays) is factorised through a dictionary, which is much faster than
    sorting a million Python strings; numbers through ``np.unique``.
    """
    array = np.asarray(values)
    if is_repeated(array):  # one value on every row: nothing to compare
        return array[:1].copy(), np.zeros(len(array), dtype=np.intp)
    if array.dtype.kind != "O":
        fast = integer_codes(array)
        if fast is not None and fast[2] is not None:
            return fast[0], fast[2]
        distinct, codes = np.unique(array, return_inverse=True)
        return distinct, codes.ravel()
    few = _few_labels(array)
    if few is not None:
        return few
    seen: dict = {}
    codes = np.fromiter((seen.setdefault(v, len(seen)) for v in array), dtype=np.intp, count=len(array))
    labels = list(seen)
    order = sorted(range(len(labels)), key=lambda i: labels[i])
    rank = np.empty(len(labels), dtype=np.intp)
    rank[order] = np.arange(len(labels))
    return np.array([labels[i] for i in order], dtype=object), rank[codes]


def first_given(
    first: tuple[np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """``factorize(np.where(a != "", a, b))`` from ``factorize(a)`` and ``factorize(b)``
    (texts of one length): each row's first non-empty text, without comparing a text per
    row, only one per pair of codes that occurs."""
    (first_labels, first_codes), (second_labels, second_codes) = first, second
    width = max(len(second_labels), 1)
    pairs, index = factorize(first_codes.astype(np.intp) * width + second_codes)
    a, b = np.divmod(pairs, width)
    a_texts = first_labels[a]
    chosen = np.where(a_texts != "", a_texts, second_labels[b] if len(second_labels) else "")
    labels, codes = factorize(np.asarray(chosen, dtype=object))
    return labels, codes[index]


def repeated(value, size: int) -> np.ndarray:
    """``value`` on each of ``size`` rows, as a read-only view of one element (a question
    or level label on every observation): no memory and no work per row, and
    ``factorize`` and ``Columns.take`` see at once that every row holds it."""
    one = np.empty(1, dtype=object)
    one[0] = value
    return np.broadcast_to(one, (size,))


def is_repeated(array: np.ndarray) -> bool:
    """Whether every element of a 1-D array is one and the same (a zero-stride view)."""
    return array.ndim == 1 and array.size > 1 and array.strides[0] == 0


def _few_labels(array: np.ndarray, probe: int = 1000, most: int = 8):
    """Text repeating a handful of labels (a question id, a level, a system): one
    comparison per label instead of a dictionary lookup per element; None otherwise."""
    labels = sorted(set(array[:probe].tolist()), key=str)
    if len(labels) > most or not all(isinstance(label, str) for label in labels):
        return None
    if len(labels) == 1:  # one question, one level: a single comparison pass
        return (
            (np.array(labels, dtype=object), np.zeros(len(array), dtype=np.intp))
            if (array == labels[0]).all()
            else None
        )
    codes = np.full(len(array), -1, dtype=np.intp)
    for index, label in enumerate(labels):
        codes[array == label] = index
    if (codes < 0).any():
        return None
    return np.array(labels, dtype=object), codes


def plain(value):
    """NumPy scalars → Python values (they go into JSON groups)."""
    return value.item() if isinstance(value, np.generic) else value
