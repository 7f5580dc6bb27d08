"""An adaptive likert study with two systems, for the adaptive collection tests."""

from __future__ import annotations

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
