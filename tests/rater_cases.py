"""One small study per kind an LLM rater answers: item payloads, and people's answers with
the page state they answered on (for few-shot examples). Shared by the rater tests."""

from __future__ import annotations

from dataclasses import dataclass, field

SYSTEMS = ["rome", "ft", "gpt"]


@dataclass(frozen=True)
class RaterCase:
    kind: str
    payloads: list[dict]
    # one (answer, state) per item, in the order of ``payloads``: what a person gave there
    human: list[tuple[dict, dict]]
    config: dict = field(default_factory=dict)


def _likert(n: int) -> dict:
    return {
        "new_fact": f"Lake Tolvik is located in Rome ({n}).",
        "old_facts": ["Lake Tolvik is located in Paris."],
        "main_passage": f"Lake Tolvik is in Rome. The old man walked to the river {n}.",
        "related_passage": "Port Ilse is in Paris. A young girl looked at the market.",
        "related_entity": "Port Ilse",
    }


LIKERT = RaterCase(
    "likert",
    [_likert(n) for n in range(3)],
    [({"ratings": {"edit_main": 5 + n % 2, "edit_related": 4, "naturalness": 3 + n}}, {}) for n in range(3)],
    config={
        "questions": [
            {"id": "edit_main", "passage": "main", "text": "The main passage treats the new fact as true."},
            {
                "id": "edit_related",
                "passage": "related",
                "text": "The related passage agrees with the new fact.",
            },
            {"id": "naturalness", "passage": "both", "text": "Both passages read naturally."},
        ]
    },
)
CLAIM = RaterCase(
    "claim",
    [
        {
            "claim": f"Fort Marrow is in Rome ({n}).",
            "sentences": ["Fort Marrow is in Rome.", "The baker smiled.", "It rained."],
        }
        for n in range(3)
    ],
    [
        ({"label": "supports", "evidence": [0]}, {}),
        ({"label": "neutral", "evidence": []}, {}),
        ({"label": "contradicts", "evidence": [0, 2]}, {}),
    ],
)
RANKING = RaterCase(
    "ranking",
    [
        {
            "fact": f"Mount Quen is in Oslo ({n}).",
            "passages": [{"system": s, "text": f"Mount Quen is in Oslo, wrote {s} {n}."} for s in SYSTEMS],
        }
        for n in range(3)
    ],
    [
        (
            {
                "shown": ["ft", "gpt", "rome"],
                "choices": {
                    "consistency": {"most": "rome", "least": "gpt"},
                    "fluency": {"most": "ft", "least": "rome"},
                },
            },
            {"shown": ["ft", "gpt", "rome"]},
        )
    ]
    * 3,
)
PLAUSIBILITY = RaterCase(
    "plausibility",
    [
        {
            "question": f"Is Lake Essen in Berlin ({n})?",
            "answer": "yes",
            "explanations": [
                {"id": "cot-model-a", "text": "Lake Essen is located in Berlin, so yes."},
                {"id": "posthoc-model-b", "text": "The teacher painted the red door."},
            ],
        }
        for n in range(3)
    ],
    [
        (
            {"ratings": {"cot-model-a": "yes", "posthoc-model-b": "no"}},
            {"order": ["posthoc-model-b", "cot-model-a"]},
        )
    ]
    * 3,
)
SIMULATION = RaterCase(
    "simulation",
    [
        {
            "variant": "yes_no",
            "starter_question": f"Is Port Halden in Lisbon ({n})?",
            "model_answer": "yes",
            "model_explanation": "Port Halden can be found in Lisbon, so the answer is yes.",
            "followup_question": f"Is Mount Sorel in Lisbon ({n})?",
            "model_followup_answer": "no" if n % 2 else "yes",
            "explanation_id": f"x{n}",
        }
        for n in range(3)
    ],
    [({"choice": "yes"}, {}), ({"choice": "not_helpful"}, {}), ({"choice": "no"}, {})],
)
QUESTIONNAIRE = RaterCase(
    "questionnaire",
    [
        {
            "context": f"Summaries of a note about Lake Orv ({n}).",
            "passages": [
                {"id": f"s{n}-{s}", "text": f"Lake Orv is cold. Summary {k} of note {n}.", "system": s}
                for k, s in enumerate(SYSTEMS)
            ],
        }
        for n in range(3)
    ],
    [
        (
            {
                "fluency": 4,
                "faithful": "no",
                "flaws": ["facts"],
                "errors": [1],
                "pick": {"most": "s0-rome", "least": "s0-gpt"},
            },
            {"order": ["s0-ft", "s0-rome", "s0-gpt"]},
        ),
        (
            {"fluency": 2, "faithful": "yes", "errors": [], "pick": {"most": "s1-ft", "least": "s1-rome"}},
            {"order": ["s1-rome", "s1-gpt", "s1-ft"]},
        ),
        (
            {
                "fluency": 5,
                "faithful": "no",
                "flaws": ["grammar", "facts"],
                "pick": {"most": "s2-gpt", "least": "s2-ft"},
            },
            {"order": ["s2-gpt", "s2-ft", "s2-rome"]},
        ),
    ],
    config={
        "questions": [
            {
                "id": "fluency",
                "type": "scale",
                "points": 5,
                "labels": ["Broken", "Fluent"],
                "text": "How fluent?",
            },
            {"id": "faithful", "type": "choice", "options": ["yes", "no"], "text": "All faithful?"},
            {
                "id": "flaws",
                "type": "multi",
                "options": ["grammar", "facts"],
                "text": "Which flaws?",
                "show_if": {"question": "faithful", "equals": "no"},
            },
            {
                "id": "errors",
                "type": "sentences",
                "passage": 1,
                "text": "Wrong sentences?",
                "required": False,
            },
            {"id": "pick", "type": "pick", "pick": "best_worst", "text": "Best and worst summary?"},
            {"id": "note", "type": "text", "text": "Anything else?", "required": False},
        ]
    },
)
CASES = {case.kind: case for case in (LIKERT, CLAIM, RANKING, PLAUSIBILITY, SIMULATION, QUESTIONNAIRE)}
PAIRWISE_PAYLOAD = {
    "variant": "pairwise",
    "starter_context": "Which bus reaches Port Brask first?",
    "starter_responses": ["The early bus, it leaves at six.", "Buses are slow."],
    "model_choice": "response_1",
    "model_explanation": "Response 1 answers with a time; response 2 says nothing useful.",
    "followup_context": "Which road goes to Lake Wend?",
    "followup_responses": ["Roads are long.", "The north road, past the market."],
    "model_followup_answer": "response_2",
    "explanation_id": "bus-1",
}
