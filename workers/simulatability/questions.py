"""The question file of the simulatability jobs: one JSON object a line (docs/formats.md).

A yes/no question ``{"id", "question", "answer"?}`` (answer ``yes``/``no``, optional) or a
pairwise one ``{"id", "context", "responses": [r1, r2], "answer"?}`` (answer
``response_1``/``response_2``). Every line is checked and every error reported, named by
line, field and id (``annotation.services.authoring.input_rows.collect_rows``), before any model runs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from annotation.errors import InputError
from annotation.services.authoring.input_rows import read_jsonl_file

YES_NO, PAIRWISE = "yes_no", "pairwise"
ANSWERS = {YES_NO: ("yes", "no"), PAIRWISE: ("response_1", "response_2")}
MAX_TEXT = 2000  # the plausibility page's question limit; a simulation starter allows more
MAX_ID = 80


@dataclass(frozen=True)
class Question:
    id: str
    variant: str  # yes_no | pairwise
    text: str = ""  # the yes/no question
    context: str = ""  # the pairwise context
    responses: tuple[str, ...] = field(default_factory=tuple)
    gold: str = ""  # the correct answer when the file gives one

    def record(self) -> dict:
        """The question as stored beside its explanations (what the file said, normalised)."""
        if self.variant == YES_NO:
            data: dict = {"id": self.id, "question": self.text}
        else:
            data = {"id": self.id, "context": self.context, "responses": list(self.responses)}
        if self.gold:
            data["answer"] = self.gold
        return data

    @property
    def digest(self) -> str:
        """Identifies the question's content: an edited question is a new question."""
        canonical = json.dumps(self.record(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()


def read_questions(path: str | Path) -> list[Question]:
    """Every question of the file; any bad line rejects the file (``InputError`` naming line and field)."""
    return read_jsonl_file(
        path, check_question, parameter="questions", what="questions", id_field="id", unique_by=lambda q: q.id
    )


def check_question(record) -> Question:
    """One line of the file as a ``Question``; ``InputError`` naming the field otherwise."""
    if not isinstance(record, dict):
        raise InputError({"": ["A line is a JSON object."]})
    qid = record.get("id")
    if not isinstance(qid, (str, int)) or isinstance(qid, bool) or not str(qid).strip():
        raise InputError({"id": ["Give each question an id (a string)."]})
    if len(str(qid)) > MAX_ID:
        raise InputError({"id": [f"At most {MAX_ID} characters."]})
    variant = PAIRWISE if "context" in record or "responses" in record else YES_NO
    allowed = {"id", "answer", *(("context", "responses") if variant == PAIRWISE else ("question",))}
    unknown = sorted(set(record) - allowed)
    if unknown:
        raise InputError({name: ["Unknown field."] for name in unknown})
    gold = record.get("answer", "")
    if gold not in ("", *ANSWERS[variant]):
        raise InputError({"answer": [f"Choose one of: {', '.join(ANSWERS[variant])} (or leave it out)."]})
    if variant == YES_NO:
        return Question(str(qid).strip(), YES_NO, text=_text(record, "question"), gold=gold)
    responses = record.get("responses")
    if not isinstance(responses, list) or len(responses) != 2:
        raise InputError({"responses": ["Give exactly two responses."]})
    checked = tuple(_text({"r": value}, "r", f"responses[{i}]") for i, value in enumerate(responses))
    return Question(
        str(qid).strip(), PAIRWISE, context=_text(record, "context"), responses=checked, gold=gold
    )


def _text(record: dict, key: str, name: str = "") -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InputError({name or key: ["Give a non-empty text."]})
    if len(value) > MAX_TEXT:
        raise InputError({name or key: [f"At most {MAX_TEXT} characters."]})
    return " ".join(value.split())
