"""A word trigram language model with nucleus sampling: the demo's own small generator.

Pure Python, trained in a fraction of a second on a few thousand sentences, seeded, so
the demo's machine-written continuations come from a real model running on the spot.

The next-word distribution interpolates trigram, bigram and unigram counts with
Witten-Bell weights; the unigram level covers the ``vocabulary`` most frequent words
(other words still come through the higher levels). Nucleus sampling keeps the most
likely words until their probability reaches ``p`` and draws among them; ``p = 0`` is
greedy decoding.

A model trained on a document would simply recite it when asked to continue it, so
``generate`` leaves out the counts of the training document the prefix comes from:
a continuation is always the model's own text, never the original.
"""

from __future__ import annotations

import heapq
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

ORDER = 3
OPENING_TOKENS = 8  # a prefix whose first tokens open a training document comes from it
MIN_OPENING_TOKENS = 4
SEEN_CACHE_SIZE = 100_000  # contexts whose next words a model remembers (then it starts afresh)
SENTENCE_END = {".", "!", "?"}
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*|[.,!?;:]")
_SPACE_BEFORE_PUNCTUATION = re.compile(r" ([.,!?;:])")

Counts = dict[tuple[str, ...], Counter]


def tokenize(text: str) -> list[str]:
    """Words (with inner apostrophes and hyphens) and punctuation marks."""
    return _TOKEN.findall(text)


def detokenize(tokens: Sequence[str]) -> str:
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", " ".join(tokens))


@dataclass(frozen=True)
class TrainingDocument:
    id: str
    text: str


class NgramModel:
    """Counts of every context of 0, 1 and 2 words, overall and per training document."""

    def __init__(self, documents: Sequence[TrainingDocument], *, vocabulary: int = 1000):
        self.vocabulary = vocabulary
        self.counts: Counts = defaultdict(Counter)
        self.document_counts: dict[str, Counts] = {}
        self.openings: dict[tuple[str, ...], str] = {}
        self._unigram_cache: dict[str | None, tuple] = {}
        self._seen_cache: dict[tuple[tuple[str, ...], str | None], tuple[dict[str, float], float]] = {}
        for document in documents:
            tokens = tokenize(document.text)
            own = _count(tokens)
            for context, followers in own.items():
                self.counts[context].update(followers)
            self.document_counts[document.id] = own
            self.openings[tuple(tokens[:OPENING_TOKENS])] = document.id

    def source_document(self, tokens: Sequence[str]) -> str | None:
        """The training document the prefix opens, if exactly one does (on at least
        ``MIN_OPENING_TOKENS`` tokens, up to ``OPENING_TOKENS``)."""
        size = min(OPENING_TOKENS, len(tokens))
        if size < MIN_OPENING_TOKENS:
            return None
        head = tuple(tokens[:size])
        found = [document for opening, document in self.openings.items() if opening[:size] == head]
        return found[0] if len(found) == 1 else None

    def ranked_next_words(
        self, context: Sequence[str], *, leave_out: str | None = None
    ) -> Iterator[tuple[str, float]]:
        """(word, probability) pairs, most likely first (ties by word), produced lazily.

        The unigram level's order is fixed, so only the few words seen after the context
        need sorting; the two sorted streams are merged as the sampler walks them.
        """
        seen, scale = self._seen_after(tuple(context[len(context) - (ORDER - 1) :]), leave_out)
        unigrams = self._unigrams(leave_out)[0]
        rest = ((word, scale * count) for word, count in unigrams if word not in seen)
        return heapq.merge(seen.items(), rest, key=_rank)

    def _seen_after(self, context: tuple[str, ...], leave_out: str | None) -> tuple[dict[str, float], float]:
        """The words seen after the context (its last ``ORDER - 1`` words), with their
        probabilities, most likely first, and the unigram level's scale; remembered, since
        a text's common word pairs come back again and again (the demo game's generation
        spent most of its time here)."""
        key = (context, leave_out)
        if key not in self._seen_cache:
            if len(self._seen_cache) >= SEEN_CACHE_SIZE:
                self._seen_cache.clear()
            higher, carried = self._higher_orders(context, leave_out)
            _, counts, total = self._unigrams(leave_out)
            scale = carried / total
            seen = sorted(
                ((word, weight + scale * counts.get(word, 0)) for word, weight in higher.items()), key=_rank
            )
            self._seen_cache[key] = (dict(seen), scale)
        return self._seen_cache[key]

    def generate(self, prefix: str, *, p: float, seed: int, max_new_tokens: int) -> str:
        """Continue ``prefix``; the text ends at the last complete sentence."""
        rng = random.Random(seed)
        tokens = tokenize(prefix)
        leave_out = self.source_document(tokens)
        new: list[str] = []
        for _ in range(max_new_tokens):
            new.append(nucleus_sample(self.ranked_next_words(tokens + new, leave_out=leave_out), p, rng))
        ends = [i for i, token in enumerate(new) if token in SENTENCE_END]
        return detokenize(new[: ends[-1] + 1]) if ends else ""

    def _higher_orders(self, context: Sequence[str], leave_out: str | None) -> tuple[dict[str, float], float]:
        """Witten-Bell weights from the trigram and bigram levels, and the mass left over."""
        weights: dict[str, float] = defaultdict(float)
        carried = 1.0
        for size in range(ORDER - 1, 0, -1):
            followers = self._followers(tuple(context[len(context) - size :]), leave_out)
            total, types = sum(followers.values()), len(followers)
            if not total:
                continue
            for word, count in followers.items():
                weights[word] += carried * count / (total + types)
            carried *= types / (total + types)
        return weights, carried

    def _followers(self, context: tuple[str, ...], leave_out: str | None) -> Counter:
        followers = self.counts.get(context, Counter())
        if leave_out is None or context not in self.document_counts[leave_out]:
            return followers
        return followers - self.document_counts[leave_out][context]

    def _unigrams(self, leave_out: str | None) -> tuple[tuple[tuple[str, int], ...], dict[str, int], int]:
        """The ``vocabulary`` most frequent words (without the left-out document), cached."""
        if leave_out not in self._unigram_cache:
            counts = self._followers((), leave_out)
            top = tuple(sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))[: self.vocabulary])
            self._unigram_cache[leave_out] = (top, dict(top), sum(count for _, count in top))
        return self._unigram_cache[leave_out]


def _rank(pair: tuple[str, float]) -> tuple[float, str]:
    return (-pair[1], pair[0])


def nucleus_sample(distribution: Iterable[tuple[str, float]], p: float, rng: random.Random) -> str:
    """Draw from the smallest set of most likely words whose probability reaches ``p``.

    ``distribution`` is sorted, most likely first, and read only as far as needed.
    ``p = 0`` keeps only the most likely word (greedy); ``p = 1`` keeps every word.
    """
    kept, mass = [], 0.0
    for word, probability in distribution:
        kept.append((word, probability))
        mass += probability
        if mass >= p:
            break
    point = rng.random() * mass
    for word, probability in kept:
        point -= probability
        if point < 0:
            return word
    return kept[-1][0]


def _count(tokens: Sequence[str]) -> Counts:
    counts: Counts = defaultdict(Counter)
    for index, word in enumerate(tokens):
        for size in range(ORDER):
            if index - size < 0:
                break
            counts[tuple(tokens[index - size : index])][word] += 1
    return counts
