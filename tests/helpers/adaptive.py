"""An adaptive likert study with two systems, for the adaptive collection tests."""

from __future__ import annotations

from annotation.models import Study
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response

ITEMS, CAP = 20, 5


def likert_study_file(stop: dict | None, *, slug: str = "adaptive-likert") -> dict:
    """A live adaptive likert study of ``ITEMS`` items, half of system A, half of B, one
    question (``quality``), ``CAP`` answers per item at most; ``stop``: its stopping rule."""
    items = [
        {
            "external_id": f"p{index}",
            "payload": {"new_fact": f"Fact {index}.", "main_passage": f"Passage number {index}."},
            "provenance": {"system": "A" if index % 2 else "B"},
        }
        for index in range(ITEMS)
    ]
    return {
        "slug": slug,
        "title": "Adaptive",
        "kind": "likert",
        "status": "live",
        "annotations_per_item": CAP,
        "items_per_session": 5,
        "config": {
            "questions": [{"id": "quality", "passage": "main", "text": "The passage reads well."}],
            "assignment": "adaptive",
            "adaptive": {"min_answers": 2, "stop": stop},
        },
        "items": items,
    }


def answer_all(study: Study, enrolled, ratings: dict[str, list[int]]) -> None:
    """Participants answer until no page is left, each system's ratings in turn."""
    turn = {system: 0 for system in ratings}
    while True:
        participant = enrolled(study)
        pages = 0
        while (page := assign_next_item(participant=participant, study=study)) is not None:
            system = page.item.provenance["system"]
            rating = ratings[system][turn[system] % len(ratings[system])]
            turn[system] += 1
            submit_response(assignment=page, answer={"ratings": {"quality": rating}})
            pages += 1
        if not pages:
            return
