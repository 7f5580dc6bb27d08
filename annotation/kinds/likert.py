"""Likert survey of edited-model passages (LEME): a new fact, the old facts, a main passage
about the edited subject and a related passage about a coupled entity, rated statement by
statement on an agreement scale.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.http import QueryDict
from django.utils.translation import gettext, gettext_noop
from rest_framework import serializers

from .base import (
    ModelOption,
    ModelQuestion,
    ModelTask,
    Observation,
    RaterAnswer,
    RaterExample,
    RaterQuestion,
    Score,
    StrictSerializer,
    TaskKind,
)
from .checks import check_ratings, check_unique, integer_in_range, score_ratings

PASSAGES = ["main", "related", "both"]
ID_PATTERN = r"^[A-Za-z0-9_-]+$"

# Our wording of the nine questions of a long-form model-editing survey.
DEFAULT_QUESTIONS = [
    {"id": "edit_main", "passage": "main", "text": "The main passage treats the new fact as true."},
    {
        "id": "edit_related",
        "passage": "related",
        "text": "Nothing in the related passage goes against the new fact.",
    },
    {
        "id": "factual_main",
        "passage": "main",
        "text": "Setting the new fact aside, the old facts mostly still hold in the main passage.",
    },
    {
        "id": "factual_related",
        "passage": "related",
        "text": "Setting the new fact aside, the old facts mostly still hold in the related passage.",
    },
    {
        "id": "internal_main",
        "passage": "main",
        "text": "Leaving all the facts out of it, the main passage never contradicts itself.",
    },
    {
        "id": "internal_related",
        "passage": "related",
        "text": "Leaving all the facts out of it, the related passage never contradicts itself.",
    },
    {
        "id": "cross_passage",
        "passage": "both",
        "text": "Leaving all the facts out of it, the two passages agree with each other.",
    },
    {
        "id": "topicality",
        "passage": "both",
        "text": "The main passage stays on its subject and the related passage stays on the related entity.",
    },
    {
        "id": "naturalness",
        "passage": "both",
        "text": "Both passages read like natural text that a person could have written.",
    },
]
SEVEN_LABELS = [
    "Strongly disagree",
    "Disagree",
    "Somewhat disagree",
    "Neither agree nor disagree",
    "Somewhat agree",
    "Agree",
    "Strongly agree",
]
FIVE_LABELS = ["Strongly disagree", "Disagree", "Neither agree nor disagree", "Agree", "Strongly agree"]
# Marked for translation: the page shows them in its language.
GROUP_TITLES = {
    "main": gettext_noop("Main passage"),
    "related": gettext_noop("Related passage"),
    "both": gettext_noop("Both passages together"),
}


# Text limits (docs/formats.md, "Text limits"): a fact is a paragraph at most, a passage an article.
FACT_LENGTH = 5000
PASSAGE_LENGTH = 50000


def default_labels(points: int) -> list[str]:
    """Labels for a scale without its own: every point for 5 and 7, else the two ends."""
    if points == 7:
        return list(SEVEN_LABELS)
    if points == 5:
        return list(FIVE_LABELS)
    return [SEVEN_LABELS[0], *([""] * (points - 2)), SEVEN_LABELS[-1]]


class LikertQuestion(StrictSerializer):
    id = serializers.RegexField(ID_PATTERN, max_length=60)
    text = serializers.CharField(max_length=500)
    passage = serializers.ChoiceField(choices=PASSAGES)
    # The type of statement (e.g. "consistency"): agreement is also reported per group.
    group = serializers.RegexField(ID_PATTERN, max_length=60, required=False)


class LikertScale(StrictSerializer):
    points = serializers.IntegerField(min_value=2, max_value=11, default=7)
    labels = serializers.ListField(
        child=serializers.CharField(max_length=60, allow_blank=True), required=False
    )

    def validate(self, data: dict) -> dict:
        labels = data.get("labels")
        if labels is None:
            data["labels"] = default_labels(data["points"])
        elif len(labels) != data["points"]:
            raise serializers.ValidationError(
                {"labels": [f"Give one label per point: {data['points']} labels (blank ones allowed)."]}
            )
        return data


class LikertConfig(StrictSerializer):
    """The statements to rate and the scale; both have defaults (the nine questions, 7 points)."""

    questions = serializers.ListField(child=LikertQuestion(), min_length=1, max_length=40, required=False)
    scale = LikertScale(required=False)

    def validate(self, data: dict) -> dict:
        questions = data.get("questions") or DEFAULT_QUESTIONS
        questions = check_unique(questions, "id", "questions", "Question id {!r} is used twice.")
        scale = data.get("scale")
        if scale is None:
            scale = {"points": 7, "labels": default_labels(7)}
        return {"questions": questions, "scale": dict(scale)}


class LikertPayload(StrictSerializer):
    new_fact = serializers.CharField(max_length=FACT_LENGTH)
    old_facts = serializers.ListField(
        child=serializers.CharField(max_length=FACT_LENGTH), max_length=200, required=False, default=list
    )
    main_passage = serializers.CharField(max_length=PASSAGE_LENGTH)
    related_passage = serializers.CharField(max_length=PASSAGE_LENGTH, required=False)
    related_entity = serializers.CharField(max_length=200, required=False)

    def validate(self, data: dict) -> dict:
        if "related_entity" in data and "related_passage" not in data:
            raise serializers.ValidationError(
                {"related_entity": ["A related entity needs its related_passage."]}
            )
        if not applicable_questions(settings_of(self.context["config"])["questions"], data):
            raise serializers.ValidationError(
                {"related_passage": ["Every question of this study is about the related passage."]}
            )
        return data


class LikertAnswer(StrictSerializer):
    """``{"ratings": {question_id: 1..points}}``; every question the item asks (gold: some)."""

    ratings = serializers.JSONField()

    def validate(self, data: dict) -> dict:
        settings = settings_of(self.context["config"])
        questions = applicable_questions(settings["questions"], self.context["item"].payload)
        wanted = {q["id"]: gettext("the statement “%(text)s”") % {"text": q["text"]} for q in questions}
        points = settings["scale"]["points"]
        ratings = check_ratings(
            data["ratings"], wanted, integer_in_range(1, points), partial=bool(self.context.get("gold"))
        )
        return {"ratings": ratings}


def settings_of(config: dict) -> dict:
    """The study's questions and scale: its stored config, which ``LikertConfig`` validated
    on the way in (filling the defaults), read as it stands."""
    return {"questions": config["questions"], "scale": config["scale"]}


def applicable_questions(questions: list[dict], payload: dict) -> list[dict]:
    """Questions about the related passage (alone or with the main one) need one on the item."""
    has_related = bool(payload.get("related_passage"))
    return [q for q in questions if q["passage"] == "main" or has_related]


class Likert(TaskKind):
    name = "likert"
    # What a datasheet (HEDS) says of the kind's evaluations (``TaskKind.evaluation``).
    evaluation: ClassVar[dict[str, Any]] = {
        "input": "text: multiple sentences and control features (a fact to insert)",
        "output": "text: multiple sentences (edited passages)",
        "task": "post-editing/correction (a knowledge edit, judged on the passages it writes)",
        "relative": False,
        "extrinsic": False,
        "objective": False,
        "elicitation": "(dis)agreement with quality statement",
    }
    agreement_per_answer = True  # agreement_values below
    report = "scoring.reports.likert.LikertReport"
    label = gettext_noop("Likert survey (new fact, main and related passages)")
    template = "annotation/kinds/likert.html"
    Config = LikertConfig
    Payload = LikertPayload
    Answer = LikertAnswer

    def page_context(self, item, assignment) -> dict:
        settings = settings_of(item.study.config)
        payload = item.payload
        questions = applicable_questions(settings["questions"], payload)
        groups = []
        for key in PASSAGES:
            asked = [
                {**q, "field": f"rating-{q['id']}", "selected": ""} for q in questions if q["passage"] == key
            ]
            if asked:
                text = {"main": payload["main_passage"], "related": payload.get("related_passage")}.get(key)
                about = payload.get("related_entity", "") if key == "related" else ""
                groups.append(
                    {"key": key, "title": GROUP_TITLES[key], "about": about, "text": text, "questions": asked}
                )
        labels = settings["scale"]["labels"]
        return {
            "new_fact": payload["new_fact"],
            "old_facts": payload.get("old_facts", []),
            "groups": groups,
            "scale": [{"value": str(n), "label": labels[n - 1]} for n in range(1, len(labels) + 1)],
            "scale_low": labels[0] or "1",
            "scale_high": labels[-1] or str(len(labels)),
        }

    def answer_from_form(self, data: QueryDict, item, assignment) -> dict:
        questions = applicable_questions(settings_of(item.study.config)["questions"], item.payload)
        fields = {q["id"]: data.get(f"rating-{q['id']}") for q in questions}
        return {"ratings": {key: value for key, value in fields.items() if value not in (None, "")}}

    def review_context(self, item, answer: dict) -> dict:
        """A worked example shows the statements it rates (all passages stay in view)."""
        context = self.page_context(item, None)
        ratings = answer.get("ratings", {})
        for group in context["groups"]:
            group["questions"] = [q for q in group["questions"] if q["id"] in ratings]
            for question in group["questions"]:
                question["selected"] = str(ratings[question["id"]])
        context["groups"] = [g for g in context["groups"] if g["text"] or g["questions"]]
        return {**context, "answer": answer, "readonly": True}

    answerable_by_model = True

    def model_task(self, item, state: dict) -> ModelTask:
        """The facts and passages as the page shows them; one question per statement,
        answered with a point of the scale (``1`` … ``7``)."""
        page = self.model_page(item, state)
        lines = [f"New fact: {page['new_fact']}"]
        if page["old_facts"]:
            lines += ["Old facts:", *(f"- {fact}" for fact in page["old_facts"])]
        for group in page["groups"]:
            if group["text"]:
                about = f" (about {group['about']})" if group["about"] else ""
                lines += ["", f"{group['title']}{about}:", group["text"]]
        options = tuple(
            ModelOption(int(point["value"]), point["value"], point["label"]) for point in page["scale"]
        )
        questions = tuple(
            ModelQuestion(
                id=f"ratings.{question['id']}",
                key=f"ratings.{question['id']}",
                text=f"{group['title']}. How much do you agree with this statement? {question['text']}",
                options=options,
            )
            for group in page["groups"]
            for question in group["questions"]
        )
        return ModelTask("\n".join(lines), questions)

    def answer_from_model(self, item, state: dict, chosen, scores=None) -> dict:
        return {
            "ratings": {
                qid.removeprefix("ratings."): value
                for qid, value in chosen.items()
                if qid.startswith("ratings.")
            }
        }

    def model_choices(self, item, state: dict, answer: dict) -> dict:
        return {f"ratings.{qid}": value for qid, value in answer.get("ratings", {}).items()}

    def score(self, item, answer: dict) -> Score | None:
        return score_ratings(item, answer)

    def agreement_values(self, item, answer: dict) -> list[Observation]:
        return [
            Observation(item.external_id, question, value, "ordinal")
            for question, value in answer["ratings"].items()
        ]

    # --- trained raters ---------------------------------------------------------------
    # One rater per statement, learnt by regression. It reads the passage(s) the statement
    # is about, after the new fact and the old facts (edit and factual consistency are
    # judged against them), paired with the statement itself. The target is the rating
    # scaled to 0..1; a prediction is scaled back to the nearest point of the scale.

    trained_raters = True

    def scale_questions(self, config: dict) -> tuple[str, ...]:
        return tuple(q["id"] for q in settings_of(config)["questions"])

    def rater_questions(self, config: dict) -> list[RaterQuestion]:
        settings = settings_of(config)
        points = tuple(range(1, int(settings["scale"]["points"]) + 1))
        return [
            RaterQuestion(q["id"], q["text"], points, True, about=q["passage"]) for q in settings["questions"]
        ]

    def rater_pair(self, question: RaterQuestion, item) -> tuple[str, str] | None:
        if not applicable_questions([{"passage": question.about}], item.payload):
            return None
        return _rater_context(question.about, item.payload), question.text

    def rater_value(self, question: RaterQuestion, answer: dict):
        return answer.get("ratings", {}).get(question.id)

    def rater_examples(self, question: RaterQuestion, item, answer: dict) -> list[RaterExample]:
        value, pair = self.rater_value(question, answer), self.rater_pair(question, item)
        if value is None or pair is None:
            return []
        return [RaterExample(*pair, (float(value) - 1.0) / (len(question.labels) - 1))]

    def rater_answers(self, questions, items, read) -> list[RaterAnswer]:
        """Each statement's rater rates the items the statement applies to."""
        outputs: list[dict[str, float]] = [{} for _ in items]
        for question in questions:
            pairs = [(i, self.rater_pair(question, item)) for i, item in enumerate(items)]
            asked = [(i, pair) for i, pair in pairs if pair is not None]
            values = read(question, [pair for _, pair in asked])
            for (i, _), value in zip(asked, values, strict=True):
                outputs[i][question.id] = float(value)
        by_id = {q.id: q for q in questions}
        answers = []
        for output in outputs:
            raw = {key: round(value, 6) for key, value in output.items()}
            ratings = {key: by_id[key].value_from_output(value) for key, value in output.items()}
            answers.append(RaterAnswer({"ratings": ratings}, {"outputs": raw}, raw))
        return answers


def _rater_context(passage: str, payload: dict) -> str:
    """What a statement's rater reads: the facts, then the passage(s) it is about."""
    parts = [f"New fact: {payload['new_fact']}"]
    if payload.get("old_facts"):
        parts.append("Old facts: " + " ".join(payload["old_facts"]))
    if passage in ("main", "both"):
        parts.append(f"Main passage: {payload['main_passage']}")
    if passage in ("related", "both") and payload.get("related_passage"):
        parts.append(f"Related passage: {payload['related_passage']}")
    return "\n".join(parts)
