"""The pairwise study of UX review 3 (U1) as the per-passage form asks it: one fluency scale
asked under each reply, a pairwise pick, an optional reason; two systems, ``gpt-small``
(fluent) and ``baseline`` (garbled), the same passage ids ``a`` / ``b`` on every item."""

from __future__ import annotations

QUESTIONS = [
    {
        "id": "fluency",
        "type": "scale",
        "per": "passage",
        "points": 5,
        "labels": ["Broken", "Flawless"],
        "text": "How fluent is this reply?",
    },
    {"id": "better", "type": "pick", "pick": "pairwise", "text": "Which reply is better?"},
    {"id": "reason", "type": "text", "text": "Why?", "required": False, "max_length": 500},
]
SYSTEMS = {"a": "gpt-small", "b": "baseline"}


def per_passage_file(slug: str = "pair-fluency", items: int = 6, **fields) -> dict:
    return {
        "slug": slug,
        "title": "Which reply is better?",
        "kind": "questionnaire",
        "status": "live",
        "annotations_per_item": 4,
        "items_per_session": items,
        "completion_code": "PAIR-OK",
        "config": {"questions": QUESTIONS},
        "items": [
            {
                "external_id": f"pw{n}",
                "payload": {
                    "context": f"Prompt {n}",
                    "passages": [
                        {"id": "a", "text": f"A fluent reply number {n}.", "system": SYSTEMS["a"]},
                        {"id": "b", "text": f"reply garbled the {n} of.", "system": SYSTEMS["b"]},
                    ],
                },
            }
            for n in range(items)
        ],
        **fields,
    }


def consistent_answer(item: int, person: int) -> dict:
    """What a consistent worker gives: the fluent reply 4–5, the garbled one 1–2, and picks
    the fluent one (person 3 picks the garbled one on every third item)."""
    fluent, garbled = 4 + (item + person) % 2, 1 + (item * person) % 2
    picked = "b" if person == 3 and item % 3 == 0 else "a"
    return {"fluency": {"a": fluent, "b": garbled}, "better": picked}
