"""RoFT passages: human sentences, then a machine continuation from the boundary on.

For each human-written document: choose how many sentences stay human (h, 1 ≤ h ≤ N; h = N
is an all-human passage), continue the first h sentences with a backend at a nucleus p,
split the continuation into sentences, keep the passage only if it passes the quality
rules, and cut it to N sentences. The result is a ``boundary`` item whose boundary is h.
Everything is seeded and the item ids are derived from the inputs, so running the same
plan twice yields the same items.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise

from annotation.text import split_sentences

from .backend import Continuation, ContinuationBackend, ContinuationRequest

MIN_SENTENCE_CHARS = 4  # a sentence of 3 characters or fewer fails the quality rules


@dataclass(frozen=True)
class CorpusDocument:
    id: str
    text: str
    category: str


@dataclass(frozen=True)
class PassagePlan:
    document: CorpusDocument
    sentences: tuple[str, ...]  # the document's first N sentences (or as many as it has)
    human: int  # h: sentences kept human; the boundary index of the item
    p: float
    seed: int


def plan_passages(
    documents: Iterable[CorpusDocument],
    *,
    length: int = 10,
    p_values: Sequence[float] | None = None,
    all_human_share: float = 0.1,
    seed: int = 0,
) -> list[PassagePlan]:
    """One plan per usable document. ``p_values`` None means p uniform in [0, 1]."""
    rng = random.Random(seed)
    plans = []
    for document in documents:
        sentences = tuple(split_sentences(document.text))
        all_human = len(sentences) >= length and rng.random() < all_human_share
        human = length if all_human else rng.randint(1, min(length - 1, len(sentences)))
        p = rng.choice(list(p_values)) if p_values else round(rng.random(), 2)
        passage_seed = _derived_seed(seed, document.id)
        plans.append(PassagePlan(document, sentences[:length], human, float(p), passage_seed))
    return plans


def build_passages(
    plans: Sequence[PassagePlan],
    backend: ContinuationBackend,
    *,
    length: int = 10,
    batch_size: int = 8,
    max_new_tokens: int = 160,
) -> Iterator[tuple[PassagePlan, dict | None]]:
    """Yield (plan, study-file item) per plan; the item is None when a rule rejects it."""
    for start in range(0, len(plans), batch_size):
        batch = plans[start : start + batch_size]
        needs_machine = [plan for plan in batch if plan.human < length]
        requests = [
            ContinuationRequest(" ".join(plan.sentences[: plan.human]), plan.p, plan.seed, max_new_tokens)
            for plan in needs_machine
        ]
        continuations = dict(zip(needs_machine, backend.continue_texts(requests), strict=True))
        for plan in batch:
            yield plan, boundary_item(plan, continuations.get(plan), length=length, backend_name=backend.name)


def boundary_item(
    plan: PassagePlan, continuation: Continuation | None, *, length: int, backend_name: str
) -> dict | None:
    """The ``boundary`` item for a plan, or None when the passage fails the quality rules."""
    human = list(plan.sentences[: plan.human])
    if continuation is None:
        if len(human) < length:
            return None
        sentences, model, decoding = human, backend_name, {}
    else:
        machine = split_sentences(continuation.text)
        sentences = (human + machine)[:length]
        model, decoding = continuation.model, continuation.decoding
    if not passes_quality_rules(sentences, length):
        return None
    return {
        "external_id": passage_id(plan, model, length),
        "payload": {
            "sentences": sentences,
            "boundary": plan.human,
            "category": plan.document.category,
            "model": model,
            "p": plan.p,
            "decoding": decoding,
            "seed": plan.seed,
        },
        "provenance": {
            "system": model,
            "model": model,
            "method": "nucleus sampling" if plan.p > 0 else "greedy",
            "decoding": {"top_p": plan.p, **decoding},
            "seed": plan.seed,
            "source_id": plan.document.id,
        },
    }


def passes_quality_rules(sentences: Sequence[str], length: int) -> bool:
    """Enough sentences, none of 3 characters or fewer, no sentence repeated right after itself."""
    if len(sentences) < length:
        return False
    if any(len(s.strip()) < MIN_SENTENCE_CHARS for s in sentences):
        return False
    return all(a.strip() != b.strip() for a, b in pairwise(sentences))


def passage_id(plan: PassagePlan, model: str, length: int) -> str:
    """Deterministic: the same document, model, length, h, p and seed give the same id."""
    key = f"{model}|{length}|{plan.human}|{plan.p}|{plan.seed}"
    return f"{plan.document.id}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"  # noqa: S324 - an id


def _derived_seed(seed: int, document_id: str) -> int:
    digest = hashlib.sha256(f"{seed}:{document_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")
