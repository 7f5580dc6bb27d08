"""Builds the demo's boundary studies: the corpus, continued by the ``demo`` generator
through the RoFT passage pipeline, plus a few attention checks, loaded as public studies.

Everything is seeded and the item ids come from the pipeline, so building again yields
the same items and changes nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from annotation.services.authoring.studies import LoadResult, load_study_file
from workers.generation.backend import load_backend
from workers.generation.continuations import CorpusDocument, build_passages, plan_passages

from .corpus import demo_corpus

LENGTH = 10
P_VALUES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
ALL_HUMAN_SHARE = 0.15
MAX_NEW_TOKENS = 320
SEED = 3
ATTEMPTS = 3  # a document whose passage fails the quality rules is planned again, reseeded

INSTRUCTIONS = """Each round shows a passage one sentence at a time.
**The first sentence was written by a person.**

- Press **Next sentence — still human** while the newest sentence still reads as human.
- Press **… is machine-written** at the first sentence you think a machine wrote,
  then say what gave it away.
- After the last sentence you may also say that **a person wrote all of it**:
  some passages are human to the end.

Points: 5 for the exact sentence where the machine took over, one point less for each
sentence you wait after it, and none if you call it before the machine started.

Keys: **H** next sentence, **M** machine-written, **A** all human, **N** next passage.
"""

# An attention check reads as a passage of its own: as many sentences as the ordinary
# passages (``attention_items`` takes the first n), its request early, human to the end.
ATTENTION_CHECK = [
    "This passage is a short check that you read every sentence before you answer.",
    "A person wrote each of its sentences, including this one.",
    "Please press the button that says the text is still human at every step.",
    "Keep doing so until you reach the end of the passage.",
    "Then say that a person wrote all of it.",
    "The rounds before and after this one are ordinary passages.",
    "Some of them are human to the end, like this one, and most are not.",
    "Your guesses on them are what the study is about.",
    "There is nothing else to find in this passage.",
    "Thank you for reading carefully, and enjoy the next round.",
    "The next round starts when you ask for it.",
    "Take a short break whenever you like.",
]


@dataclass(frozen=True)
class DemoStudy:
    slug: str
    title: str
    category: str
    description: str


DEMO_STUDIES = (
    DemoStudy(
        "roft-news",
        "News reports",
        "news",
        "Local news from invented towns. A person wrote the start of each report; "
        "a small language model trained on the demo's own texts may have written the rest.",
    ),
    DemoStudy(
        "roft-stories",
        "Short stories",
        "stories",
        "Openings of short stories. Spot the sentence where a person stopped writing "
        "and the demo's language model took over — if it did.",
    ),
)


def build_items(documents: list[CorpusDocument]) -> list[dict]:
    """Boundary items for ``documents`` from the ``demo`` generator, via the pipeline."""
    backend = load_backend("demo")
    items: list[dict] = []
    remaining = documents
    for attempt in range(ATTEMPTS):
        plans = plan_passages(
            remaining, length=LENGTH, p_values=P_VALUES, all_human_share=ALL_HUMAN_SHARE, seed=SEED + attempt
        )
        rejected = []
        for plan, item in build_passages(plans, backend, length=LENGTH, max_new_tokens=MAX_NEW_TOKENS):
            if item is None:
                rejected.append(plan.document)
            else:
                items.append(item)
        remaining = rejected
        if not remaining:
            break
    return items


def attention_items(category: str, lengths: list[int], count: int = 2) -> list[dict]:
    """All-human passages whose text asks for "human" at every step (gold: all human), each as
    long as an ordinary passage drawn from ``lengths`` (the ordinary passages' sentence
    counts, seeded): a check's length does not give it away before any reveal."""
    rng = random.Random(f"attention:{category}")
    items = []
    for number in range(1, count + 1):
        length = min(max(rng.choice(lengths), 5), len(ATTENTION_CHECK))  # the request takes 5
        sentences = ATTENTION_CHECK[:length]
        items.append(
            {
                "external_id": f"attention-{category}-{number}",
                "attention_check": True,
                "payload": {"sentences": sentences, "boundary": length, "category": category},
                "gold": {"guess": length},
                "provenance": {"system": "human", "source_id": f"attention-{number}"},
            }
        )
    return items


def demo_study_file(spec: DemoStudy) -> dict:
    documents = [document for document in demo_corpus() if document.category == spec.category]
    items = build_items(documents)
    return {
        "slug": spec.slug,
        "title": spec.title,
        "kind": "boundary",
        "description": spec.description,
        "instructions": INSTRUCTIONS,
        "status": "live",
        "public": True,
        "annotations_per_item": 50,
        "items_per_session": len(items),
        "attention_check_rate": 0.1,
        "max_attention_failures": 1,
        "config": {"volunteer_attention_policy": "keep_playing"},
        "items": items
        + attention_items(spec.category, [len(item["payload"]["sentences"]) for item in items]),
    }


def load_demo_game() -> list[LoadResult]:
    """Create or refresh the demo's boundary studies (idempotent)."""
    return [load_study_file(demo_study_file(spec)) for spec in DEMO_STUDIES]
