"""Where a session's attention checks fall: read by the hand-out of pages (``assignment``)
and by the count of places a study still needs (``capacity``). What passing and failing
them does is ``attention``'s, which flags participants: kept apart, so that the hand-out
does not import the flags that give slots back through it."""

from __future__ import annotations

import random

from annotation.models import Study


def attention_pages(study: Study, enrollment_id: int) -> set[int]:
    """The page numbers (1-based) of one session that show an attention check.

    ``rate × items_per_session`` pages, chosen at random but reproducibly per enrollment
    (the same participant sees the same plan when they come back); never the first page,
    so a participant meets the task before being tested on it.
    """
    count = round(study.attention_check_rate * study.items_per_session)
    pages = list(range(2, study.items_per_session + 1))
    if count <= 0 or not pages:
        return set()
    rng = random.Random(f"attention:{study.pk}:{enrollment_id}")
    return set(rng.sample(pages, min(count, len(pages))))
