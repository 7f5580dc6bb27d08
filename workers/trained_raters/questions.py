"""What a trained rater learns, per kind: the text it reads and the answer it gives.

A rater answers one *question* of a study: a Likert statement (a rating, learnt by
regression) or a claim's label (supports / contradicts / neutral, learnt as natural
language inference). Each question turns an item into the text pair the encoder reads
and a human answer into the target it learns, and turns the encoder's outputs back into
the kind's answer. No torch here: the examples are plain text and numbers.

Likert: one rater per statement. It reads the passage(s) the statement is about, after
the new fact and the old facts (edit and factual consistency are judged against them),
paired with the statement itself. The target is the rating scaled to 0..1; a prediction
is scaled back and rounded to the nearest point of the scale.

Claim: an NLI classifier over (premise, claim). In training each human answer gives the
whole passage as premise, and, when the person highlighted evidence, the highlighted
sentences as a second premise (as LEME's rater; the second is left out when it is the
whole passage). Every human answer is an example of its own, so an item's examples
weigh its labels as its annotators did (the held-out figures use the majority). At
prediction time the premise is the whole passage (what the rater can always see); for a
supports or contradicts label the evidence is then every sentence that, read alone as
the premise, gets that label with probability ≥ 0.5, or else the one sentence that gives
it the highest probability: the kind needs evidence sentences for those labels.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.kinds.claim import LABEL_VALUES
from annotation.kinds.likert import applicable_questions, settings_of
from annotation.models import Item, Response, Study

SUPPORTED_KINDS = ("likert", "claim")
CLAIM_QUESTION = "label"
EVIDENCE_THRESHOLD = 0.5


class QuestionError(ValueError):
    """The study or question cannot have a trained rater (unsupported kind, unknown question)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Example:
    item: str  # the item's external id: the unit of the split
    first: str
    second: str
    target: float | int  # a rating scaled to 0..1, or a label's index


@dataclass(frozen=True)
class Question:
    """One question a rater answers: ``level`` nominal (labels) or ordinal (a rating)."""

    id: str
    kind: str
    text: str
    passage: str = ""  # Likert: main, related or both
    points: int = 0  # Likert: the scale's number of points

    @property
    def regression(self) -> bool:
        return self.kind == "likert"

    @property
    def level(self) -> str:
        return "ordinal" if self.regression else "nominal"

    @property
    def labels(self) -> list:
        """The answers in order: the scale's points, or the claim labels."""
        return list(range(1, self.points + 1)) if self.regression else list(LABEL_VALUES)

    def applies_to(self, item: Item) -> bool:
        if not self.regression:
            return True
        return bool(applicable_questions([{"passage": self.passage}], item.payload))

    def human_value(self, answer: dict):
        """The person's answer to this question (None when they gave none)."""
        if self.regression:
            return answer.get("ratings", {}).get(self.id)
        return answer.get("label")

    def examples(self, response: Response) -> list[Example]:
        """The training examples one human answer gives (none when it skipped the question)."""
        value = self.human_value(response.answer)
        item = response.item
        if value is None or not self.applies_to(item):
            return []
        if self.regression:
            target = (float(value) - 1.0) / (self.points - 1)
            return [Example(item.external_id, self.context(item), self.text, target)]
        label = LABEL_VALUES.index(value)
        claim, sentences = item.payload["claim"], item.payload["sentences"]
        out = [Example(item.external_id, " ".join(sentences), claim, label)]
        evidence = [sentences[i] for i in response.answer.get("evidence", []) if i < len(sentences)]
        if evidence and len(evidence) < len(sentences):
            out.append(Example(item.external_id, " ".join(evidence), claim, label))
        return out

    def pair(self, item: Item) -> tuple[str, str]:
        """What the rater reads to answer the item."""
        if self.regression:
            return self.context(item), self.text
        return " ".join(item.payload["sentences"]), item.payload["claim"]

    def context(self, item: Item) -> str:
        """Likert: the facts, then the passage(s) the statement is about."""
        payload = item.payload
        parts = [f"New fact: {payload['new_fact']}"]
        if payload.get("old_facts"):
            parts.append("Old facts: " + " ".join(payload["old_facts"]))
        if self.passage in ("main", "both"):
            parts.append(f"Main passage: {payload['main_passage']}")
        if self.passage in ("related", "both") and payload.get("related_passage"):
            parts.append(f"Related passage: {payload['related_passage']}")
        return "\n".join(parts)

    def value_from_output(self, output: float) -> int:
        """A regression output (0..1 scaled) as the nearest point of the scale."""
        return int(min(self.points, max(1, round(1 + float(output) * (self.points - 1)))))


def study_questions(study: Study) -> list[Question]:
    """Every question of the study a trained rater can answer, in the study's order."""
    if study.kind == "claim":
        return [Question(CLAIM_QUESTION, "claim", "Does the passage support or contradict the claim?")]
    if study.kind == "likert":
        settings = settings_of(study.config or {})
        points = int(settings["scale"]["points"])
        return [Question(q["id"], "likert", q["text"], q["passage"], points) for q in settings["questions"]]
    raise QuestionError(
        "study", f"Trained raters answer {' and '.join(SUPPORTED_KINDS)} studies, not {study.kind!r} ones."
    )


def chosen_questions(study: Study, question: str | None) -> list[Question]:
    """The question asked for (all of them when None); ``QuestionError`` naming it otherwise."""
    questions = study_questions(study)
    if question is None:
        return questions
    for candidate in questions:
        if candidate.id == question:
            return [candidate]
    known = ", ".join(q.id for q in questions)
    raise QuestionError("question", f"The study has no question {question!r}; its questions: {known}.")
