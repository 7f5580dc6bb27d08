"""Similarity between two short texts (counterfactual questions): BLEU, Jaccard on
content words, cosine of sentence embeddings; and their mean over all pairs of a set.

The embeddings come from outside (the workers' encoder): nothing here loads a model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

# Common English function words, left out of the Jaccard bags of words.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves""".split()  # noqa: SIM905 - a word list reads better as text
)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def content_words(text: str) -> frozenset[str]:
    """Lower-cased words of a text without stopwords."""
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


def jaccard_similarity(first: str, second: str) -> float:
    """|A ∩ B| / |A ∪ B| of the two bags of content words (two empty bags: 1)."""
    a, b = content_words(first), content_words(second)
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def bleu_similarity(first: str, second: str) -> float:
    """Sentence BLEU of ``first`` against ``second`` as the reference, in [0, 1]."""
    import sacrebleu

    return sacrebleu.sentence_bleu(first, [second]).score / 100.0


def mean_pairwise_similarity(texts: Sequence[str], similarity: Callable[[str, str], float]) -> float:
    """Mean of ``similarity(x, y)`` over ordered pairs of different members (BLEU is not
    symmetric, so both orders count); NaN with fewer than two texts.
    """
    if len(texts) < 2:
        return float("nan")
    values = [similarity(x, y) for i, x in enumerate(texts) for j, y in enumerate(texts) if i != j]
    return float(np.mean(values))


def mean_pairwise_cosine(embeddings) -> float:
    """Mean cosine similarity over pairs of different rows of an embeddings matrix."""
    e = np.asarray(embeddings, dtype=np.float64)
    if len(e) < 2:
        return float("nan")
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    unit = np.divide(e, norms, out=np.zeros_like(e), where=norms > 0)
    cosine = unit @ unit.T
    n = len(e)
    return float((cosine.sum() - np.trace(cosine)) / (n * (n - 1)))
