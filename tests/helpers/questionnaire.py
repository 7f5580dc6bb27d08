"""A small questionnaire study file the page, import and report tests share: a pairwise
preference with a tie, a fluency scale, a yes/no choice that opens a multi, errors to mark
in the first passage, and an optional reason."""

from __future__ import annotations

QUESTIONS = [
    {"id": "better", "type": "pick", "pick": "pairwise", "tie": True, "text": "Which reply is **better**?"},
    {
        "id": "fluency",
        "type": "scale",
        "points": 5,
        "labels": ["Broken", "Flawless"],
        "text": "How fluent are they?",
    },
    {"id": "issue", "type": "choice", "options": ["yes", "no"], "text": "Does either make a mistake?"},
    {
        "id": "which",
        "type": "multi",
        "options": ["grammar", "facts"],
        "text": "Which kinds of mistake?",
        "show_if": {"question": "issue", "equals": "yes"},
    },
    {
        "id": "errors",
        "type": "sentences",
        "passage": 1,
        "text": "Mark the wrong sentences of the first reply",
        "required": False,
    },
    {"id": "why", "type": "text", "text": "Why?", "required": False, "max_length": 200},
]


def questionnaire_file(slug: str = "quest", items: int = 4, **fields) -> dict:
    """A live study of ``items`` items, each two replies by the systems ``alpha`` and ``beta``."""
    return {
        "slug": slug,
        "title": "Which reply is better?",
        "kind": "questionnaire",
        "status": "live",
        "annotations_per_item": 3,
        "items_per_session": 2,
        "completion_code": "QUEST-DONE",
        "config": {"questions": QUESTIONS},
        "items": [
            {
                "external_id": f"q{n}",
                "payload": {
                    "context": f"Prompt {n}: *say hello*.",
                    "passages": [
                        {"id": f"r{n}a", "text": f"Hello number {n}. It is a fine day.", "system": "alpha"},
                        {"id": f"r{n}b", "text": f"Hi {n}.", "system": "beta"},
                    ],
                },
            }
            for n in range(items)
        ],
        **fields,
    }
