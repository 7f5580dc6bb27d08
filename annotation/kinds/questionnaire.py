"""A researcher's own questions (``config.questions``): scales, choices, picks among the
item's passages, sentences to mark, free text; the rules of each type are in ``questions``.

An item carries ``passages`` (``{id, text, system}``, one or more) and an optional Markdown
``context``. The page shows the passages under letters in an order drawn when the item is
handed out (``prepare_assignment``, kept in the assignment's state); neither their ids nor
their systems reach the browser. The letters posted back are turned into passage ids here,
and a stored pick names the passage's id. A question asked per passage (``per: "passage"``)
is drawn under each passage and stored as ``{passage id: value}``: never by letter or position.
Each response records the order shown and every passage's system (``display_record``), so
the exports can name the system of every passage and of every pick.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, ClassVar

from django.http import QueryDict
from django.utils.translation import gettext_noop
from rest_framework import serializers

from annotation.numbers import whole_number

from . import spans
from .base import (
    ModelOption,
    ModelQuestion,
    ModelTask,
    NotAnswerableByModel,
    Observation,
    QualityCriterion,
    RaterAnswer,
    RaterExample,
    RaterQuestion,
    Score,
    StrictSerializer,
    TaskKind,
)
from .questions import (
    MAX_PASSAGES,
    PASSAGE_ID_PATTERN,
    TIE,
    Invalid,
    check_answer,
    check_passages_for,
    check_questions,
    per_passage,
    sentences_of,
    visible,
)

PASSAGE_LENGTH = 50000
CONTEXT_LENGTH = 10000
RATER_TYPES = ("scale", "choice", "pick")  # the question types a trained rater answers
SCALE_KEYS = "1234567890"  # keys of a scale's points 1..10 (an 11th has none)
LETTER_KEYS = "abcdefghijklmnopqrstuvwxyz"


def letter(index: int) -> str:
    return chr(ord("A") + index)


class QuestionnaireConfig(StrictSerializer):
    questions = serializers.JSONField()

    def validate(self, data: dict) -> dict:
        return {"questions": check_questions(data["questions"])}


class Passage(StrictSerializer):
    id = serializers.RegexField(PASSAGE_ID_PATTERN.pattern)
    text = serializers.CharField(max_length=PASSAGE_LENGTH)
    system = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")


class QuestionnairePayload(StrictSerializer):
    passages = serializers.ListField(child=Passage(), min_length=1, max_length=MAX_PASSAGES)
    # DRF's metaclass moves declared fields off the class: this does not shadow ``self.context``.
    context = serializers.CharField(max_length=CONTEXT_LENGTH, required=False)  # type: ignore[assignment]

    def validate(self, data: dict) -> dict:
        passages = [dict(p) for p in data["passages"]]
        ids = [p["id"] for p in passages]
        repeated = next((i for i in ids if ids.count(i) > 1), None)
        if repeated is not None:
            raise serializers.ValidationError({"passages": [f"The passage id {repeated!r} is used twice."]})
        if TIE in ids:
            raise serializers.ValidationError(
                {"passages": [f"{TIE!r} is the answer of a tie, not a passage id."]}
            )
        try:
            check_passages_for(self.context["config"]["questions"], passages)  # type: ignore[index]
        except Invalid as exc:
            raise serializers.ValidationError({"passages": [str(exc).partition(": ")[2]]}) from None
        return {**data, "passages": passages}


class QuestionnaireAnswer(serializers.Serializer):
    """``{question id: value}`` (see ``questions.check_answer``); with ``gold`` in the
    context (attention checks, worked examples) questions may be left out."""

    def to_internal_value(self, data: Any) -> dict:
        return check_answer(
            self.context["config"]["questions"],
            self.context["item"].payload["passages"],
            data,
            partial=bool(self.context.get("gold")),
        )


class Questionnaire(TaskKind):
    name = "questionnaire"
    # What a datasheet (HEDS) says of the kind's evaluations (``TaskKind.evaluation``).
    evaluation: ClassVar[dict[str, Any]] = {
        "input": "text: multiple sentences",
        "output": "text: multiple sentences",
        "extrinsic": False,
        "objective": False,
    }
    agreement_per_answer = True  # agreement_values below
    report = "scoring.reports.questionnaire.QuestionnaireReport"
    label = gettext_noop("Questionnaire (your own questions about one or more passages)")
    template = "annotation/kinds/questionnaire.html"
    Config = QuestionnaireConfig
    Payload = QuestionnairePayload
    Answer = QuestionnaireAnswer

    def prepare_assignment(self, item, rng: random.Random) -> dict:
        """The order the passages are shown in (letters by position)."""
        ids = [p["id"] for p in item.payload["passages"]]
        return {"order": rng.sample(ids, len(ids))}

    def page_context(self, item, assignment) -> dict:
        return self._context(item, passage_order(item, assignment.state if assignment else None), {})

    def review_context(self, item, answer: dict) -> dict:
        context = self._context(item, passage_order(item, None), answer)
        return {**context, "answer": answer, "readonly": True}

    def _context(self, item, order: list[str], answer: dict) -> dict:
        """The page: the passages in ``order`` under their letters, each with the questions
        asked per passage (inputs ``q-<id>-<letter>``), then the questions about the page."""
        passages = {p["id"]: p for p in item.payload["passages"]}
        letters = {pid: letter(i) for i, pid in enumerate(order)}
        definitions = item.study.config["questions"]
        several = len(order) > 1
        shown = []
        for n, pid in enumerate(order):
            own = [
                _passage_question_context(q, item.payload["passages"], letters, pid, answer, several, n)
                for q in definitions
                if per_passage(q)
            ]
            shown.append({"letter": letters[pid], "text": passages[pid]["text"], "questions": own})
        questions = [
            _question_context(q, item.payload["passages"], letters, answer.get(q["id"]))
            for q in definitions
            if not per_passage(q)
        ]
        return {"context": item.payload.get("context", ""), "passages": shown, "questions": questions}

    def display_record(self, item, state: dict) -> dict:
        """What a response records of its page: the order shown (the file's where none was
        drawn) and each passage's system by passage id, so that every answer, a pick's and a
        per-passage question's, can be read with its system (the exports' ``shown.*`` and
        ``answer.<id>.system`` columns) even if the items change later."""
        systems = {p["id"]: p.get("system", "") for p in item.payload["passages"]}
        return {**state, "order": passage_order(item, state), "systems": systems}

    def answer_from_form(self, data: QueryDict, item, assignment) -> dict:
        """Form fields → ``{question id: value}``: letters become passage ids; a question the
        form's own answers hide is left out (as the page leaves it out)."""
        order = passage_order(item, assignment.state)
        by_letter = {letter(i): pid for i, pid in enumerate(order)}
        questions = item.study.config["questions"]
        by_id = {q["id"]: q for q in questions}
        answer: dict[str, Any] = {}
        for question in questions:
            field = f"q-{question['id']}"
            kind = question["type"]
            if per_passage(question):
                given = {pid: data.get(f"{field}-{x}") for x, pid in by_letter.items()}
                answer[question["id"]] = {
                    pid: _form_value(question, raw) for pid, raw in given.items() if raw
                }
                continue
            if kind in ("multi", "sentences"):
                value: Any = data.getlist(field)
            elif kind == "spans":
                value = spans.from_form(data.get(field), data.get(f"{field}-score"))
            elif kind == "pick" and question["pick"] == "best_worst":
                value = {end: by_letter.get(data.get(f"{field}-{end}", ""), "") for end in ("most", "least")}
                value = value if any(value.values()) else None
            elif kind == "pick":
                raw = data.get(field, "")
                value = TIE if raw == TIE else by_letter.get(raw, raw or None)
            else:
                value = data.get(field) or None
            comparable = {**answer, question["id"]: _form_value(question, value)}
            if value is not None and visible(question, comparable, by_id):
                answer[question["id"]] = comparable[question["id"]]
        return answer

    # --- model raters: every question but free text, as closed questions ---------------

    answerable_by_model = True

    def model_task(self, item, state: dict) -> ModelTask:
        """The context and the passages under their letters (the order of ``state``); per
        question the closed questions a model answers: a scale's points, a choice's options,
        a pick's letters (MOST and LEAST apart), yes / no per option of a multi and per
        sentence of a sentences question; a spans question is open (no options: the model
        writes the documented JSON, ``spans.from_model_output``). Free text is not asked (a
        study that requires it gets model answers the kind refuses, counted as invalid)."""
        page = self.model_page(item, state)
        lines = [f"Context: {page['context']}", ""] if page["context"] else []
        for passage in page["passages"]:
            lines += [f"Passage {passage['letter']}:", passage["text"], ""]
        questions: list[ModelQuestion] = []
        for passage in page["passages"]:  # asked per passage: one closed question per letter
            for question in passage["questions"]:
                questions += _model_questions(question)
        for question in page["questions"]:
            questions += _model_questions(question)
        return ModelTask("\n".join(lines).strip(), tuple(questions))

    def asks_open_model_questions(self, config: dict) -> bool:
        return any(q["type"] == "spans" for q in config.get("questions", []))

    def answer_from_model(self, item, state: dict, chosen, scores=None) -> dict:
        """Each question's value from its closed questions' choices; questions the answers
        above hide are left out. A best-worst pick with the same passage twice takes the
        likeliest other one as LEAST; a required multi or sentences question answered "no"
        throughout takes its likeliest "yes" (both from ``scores``, when read)."""
        by_letter = {letter(i): pid for i, pid in enumerate(passage_order(item, state))}
        questions = item.study.config["questions"]
        by_id = {q["id"]: q for q in questions}
        answer: dict[str, Any] = {}
        for question in questions:
            if per_passage(question):
                given = {pid: chosen.get(f"{question['id']}.{x}") for x, pid in by_letter.items()}
                answer[question["id"]] = {pid: v for pid, v in given.items() if v is not None}
                continue
            value = _value_from_model(question, by_letter, chosen, scores or {}, item.payload["passages"])
            if value is not None and visible(question, {**answer, question["id"]: value}, by_id):
                answer[question["id"]] = value
        return answer

    def swapped_state(self, item, state: dict) -> dict | None:
        """The two passages the other way round, when the study asks a pairwise pick."""
        order = passage_order(item, state)
        pairwise = any(
            q["type"] == "pick" and q["pick"] == "pairwise" for q in item.study.config["questions"]
        )
        return {**state, "order": order[::-1]} if pairwise and len(order) == 2 else None

    def model_choices(self, item, state: dict, answer: dict) -> dict[str, Any]:
        letters = {pid: letter(i) for i, pid in enumerate(passage_order(item, state))}
        choices: dict[str, Any] = {}
        for question in item.study.config["questions"]:
            value = answer.get(question["id"])
            if value is not None and per_passage(question):
                choices.update(
                    {f"{question['id']}.{letters[p]}": v for p, v in value.items() if p in letters}
                )
            elif value is not None:
                choices.update(_model_choices(question, value, letters, item.payload["passages"]))
        return choices

    # --- trained raters: scale, choice and pick questions -------------------------------
    # One rater per question; ``RaterQuestion.about`` names what it learns (``scale``,
    # ``choice``, or the pick mode). It reads the question's text and the item's context,
    # then passage text only: never a passage's id or system. A scale or a choice is one
    # answer per item, so its rater reads every passage of the item (several under the
    # letters A, B, … of the file's order) and learns the rating scaled to 0..1 (a scale)
    # or the option (a choice). A pairwise pick is a classification of the two passages as
    # a pair (first, second, tie), learnt and read in both orders so that neither side is
    # favoured. A best or best-worst pick reads each passage alone and classifies it as
    # the one picked (best; most or least) or not; the answer picks the likeliest (least:
    # among the others).

    trained_raters = True

    def rater_questions(self, config: dict) -> list[RaterQuestion]:
        """Not a question asked per passage: a trained rater reads the page as one text."""
        questions = [_rater_question(q) for q in config["questions"] if _rater_answers_it(q)]
        if not questions:
            raise NotAnswerableByModel(
                "Trained raters answer scale, choice and pick questions about the whole page; "
                "this study asks none."
            )
        return questions

    def rater_pair(self, question: RaterQuestion, item) -> tuple[str, str] | None:
        """The first pair the rater reads (a best or best-worst pick reads one per passage)."""
        return _rater_pairs(question, item.payload)[0]

    def rater_value(self, question: RaterQuestion, answer: dict) -> Any:
        """The stored value; a best-worst pick as ``"<most>|<least>"`` (one comparable value)."""
        value = answer.get(question.id)
        if question.about == "best_worst" and value is not None:
            return f"{value['most']}|{value['least']}"
        return value

    def rater_examples(self, question: RaterQuestion, item, answer: dict) -> list[RaterExample]:
        value = answer.get(question.id)
        if value is None:
            return []
        pairs = _rater_pairs(question, item.payload)
        ids = [p["id"] for p in item.payload["passages"]]
        labels = question.labels
        if question.about == "scale":
            return [RaterExample(*pairs[0], (float(value) - 1.0) / (len(labels) - 1))]
        if question.about == "choice":
            return [RaterExample(*pairs[0], labels.index(value))]
        if question.about == "pairwise":
            first = TIE if value == TIE else "first" if value == ids[0] else "second"
            swapped = {"first": "second", "second": "first"}.get(first, first)
            return [
                RaterExample(*pairs[0], labels.index(first)),
                RaterExample(*pairs[1], labels.index(swapped)),
            ]
        if question.about == "best":
            return [RaterExample(*pair, int(pid == value)) for pair, pid in zip(pairs, ids, strict=True)]
        ends = {value["most"]: labels.index("most"), value["least"]: labels.index("least")}
        return [RaterExample(*pair, ends.get(pid, 0)) for pair, pid in zip(pairs, ids, strict=True)]

    def rater_answers(self, questions, items, read) -> list[RaterAnswer]:
        """Each question's rater reads every item (one call per question); in a full answer
        a question the page would hide with the rater's own answers is left out
        (``_rater_shown``)."""
        values: list[dict[str, Any]] = [{} for _ in items]
        raws: list[dict[str, Any]] = [{} for _ in items]
        for question in questions:
            per_item = [_rater_pairs(question, item.payload) for item in items]
            outputs = list(read(question, [pair for pairs in per_item for pair in pairs]))
            offset = 0
            for i, (item, pairs) in enumerate(zip(items, per_item, strict=True)):
                chunk = outputs[offset : offset + len(pairs)]
                offset += len(pairs)
                values[i][question.id], raws[i][question.id] = _rater_reading(
                    question, item.payload["passages"], chunk
                )
        answers = []
        for item, value, raw in zip(items, values, raws, strict=True):
            answer = _rater_shown(item.study.config["questions"], value)
            answers.append(RaterAnswer(answer, {"outputs": raw}, raw))
        return answers

    def score(self, item, answer: dict) -> Score | None:
        """Against gold (some questions): correct when every question given matches."""
        if not item.gold:
            return None
        mismatched = [key for key, value in item.gold.items() if answer.get(key) != value]
        return Score(correct=not mismatched, details={"mismatched": mismatched})

    def export_fields(self, config: dict) -> list[tuple[str, tuple[str, ...]]]:
        """``answer.<question id>``: one column per question (lists stay lists; a question
        asked per passage is its ``{passage id: value}``, and flat in ``passage_columns``)."""
        return [(f"answer.{q['id']}", (q["id"],)) for q in config["questions"]]

    def passage_columns(self, config: dict, width: int) -> list[PassageColumn]:
        """The columns that put each answer beside its passage's system, for pages of at most
        ``width`` passages: per letter shown, the passage and its system, and each per-passage
        question's value for it; per pick, the system of the passage picked (best-worst: of
        MOST and LEAST)."""
        columns = []
        for n in range(width):
            x = letter(n)
            columns.append(PassageColumn(f"shown.{x}.passage", "text", "passage", n))
            columns.append(PassageColumn(f"shown.{x}.system", "text", "system", n))
            for q in config["questions"]:
                if per_passage(q):
                    kind = "integer" if q["type"] == "scale" else "text"
                    columns.append(PassageColumn(f"answer.{q['id']}.{x}", kind, "answer", n, q["id"]))
        for q in config["questions"]:
            if q["type"] == "pick" and q["pick"] == "best_worst":
                for end in ("most", "least"):
                    columns.append(
                        PassageColumn(f"answer.{q['id']}.{end}.system", "text", "picked", -1, q["id"], end)
                    )
            elif q["type"] == "pick":
                columns.append(PassageColumn(f"answer.{q['id']}.system", "text", "picked", -1, q["id"]))
        return columns

    def quality_criteria(self, config: dict) -> list[QualityCriterion]:
        """Each question of the study, its instrument by its type (a free-text question and a
        sentences question have none)."""
        return [_quality_criterion(q) for q in config.get("questions", [])]

    def scale_questions(self, config: dict) -> tuple[str, ...]:
        return tuple(q["id"] for q in config["questions"] if q["type"] == "scale")

    def compares_systems_only(self, config: dict) -> bool:
        """At least one pick and nothing else but free text (which no priority reads)."""
        types = {q["type"] for q in config["questions"]} - {"text"}
        return types == {"pick"}

    def asks_free_text(self, config: dict) -> bool:
        return any(q["type"] == "text" for q in config.get("questions", []))

    def agreement_values(self, item, answer: dict) -> list[Observation]:
        """Per question, by type: a scale one ordinal value per answer (the reports read its
        interval figures from it); a choice, a pick (the passage id, or ``tie``), each option
        of a multi (``<id>.<option>``, 0/1) and each sentence (unit ``<item>#<index>``, 0/1)
        nominal; a best-worst pick's best and worst nominal (``<id>.most``, ``<id>.least``)
        and per passage +1 / 0 / -1 ordinal (unit ``<item>#<passage id>``). Free text has
        none."""
        unit = item.external_id
        values: list[Observation] = []
        for question in item.study.config["questions"]:
            value = answer.get(question["id"])
            if value is None:
                continue
            values += _observations(question, unit, value, item.payload["passages"])
        return values


@dataclass(frozen=True)
class PassageColumn:
    """An export column about one passage of a page: ``what`` is the passage shown under
    letter ``position`` (``passage``), its system (``system``), a per-passage question's value
    for it (``answer``), or the system of the passage a pick chose (``picked``; ``end``: MOST
    or LEAST of a best-worst pick). The exports turn these into SQL (one rule for every
    format and backend)."""

    name: str
    type: str
    what: str
    position: int
    question: str = ""
    end: str = ""


def _rater_answers_it(question: dict) -> bool:
    return question["type"] in RATER_TYPES and not per_passage(question)


def _rater_question(question: dict) -> RaterQuestion:
    qid, kind, text = question["id"], question["type"], question["text"]
    if kind == "scale":
        return RaterQuestion(qid, text, tuple(range(1, question["points"] + 1)), True, about="scale")
    if kind == "choice":
        return RaterQuestion(qid, text, tuple(question["options"]), False, about="choice")
    mode = question["pick"]
    labels = {
        "pairwise": ("first", "second", *((TIE,) if question["tie"] else ())),
        "best": ("other", "best"),
        "best_worst": ("other", "most", "least"),
    }[mode]
    return RaterQuestion(qid, text, labels, False, about=mode)


def _rater_pairs(question: RaterQuestion, payload: dict) -> list[tuple[str, str]]:
    """The text pairs a question's rater reads on an item: the question and the context
    first, passage text second (never ids or systems)."""
    head = "\n".join(part for part in (question.text, payload.get("context", "")) if part)
    texts = [p["text"] for p in payload["passages"]]
    if question.about in ("scale", "choice"):
        if len(texts) == 1:
            return [(head, texts[0])]
        return [(head, "\n\n".join(f"Passage {letter(i)}: {t}" for i, t in enumerate(texts)))]
    if question.about == "pairwise":
        one, two = texts
        return [
            (f"{head}\nPassage A: {one}", f"Passage B: {two}"),
            (f"{head}\nPassage A: {two}", f"Passage B: {one}"),
        ]
    return [(head, text) for text in texts]


def _rater_reading(question: RaterQuestion, passages: list[dict], outputs: list) -> tuple[Any, Any]:
    """(the answer's value, the raw outputs kept) from a question's rater outputs on one
    item (one per pair of ``_rater_pairs``); ties go to the first passage, as ``argmax``."""
    ids = [p["id"] for p in passages]
    labels = question.labels
    if question.about == "scale":
        output = float(outputs[0])
        return question.value_from_output(output), round(output, 6)
    rows = [[float(p) for p in row] for row in outputs]
    if question.about == "choice":
        probabilities = dict(zip(labels, rows[0], strict=True))
    elif question.about == "pairwise":
        ahead, swapped = dict(zip(labels, rows[0], strict=True)), dict(zip(labels, rows[1], strict=True))
        probabilities = {
            ids[0]: (ahead["first"] + swapped["second"]) / 2,
            ids[1]: (ahead["second"] + swapped["first"]) / 2,
        }
        if TIE in labels:
            probabilities[TIE] = (ahead[TIE] + swapped[TIE]) / 2
    elif question.about == "best":
        probabilities = {pid: row[labels.index("best")] for pid, row in zip(ids, rows, strict=True)}
    else:
        most = {pid: row[labels.index("most")] for pid, row in zip(ids, rows, strict=True)}
        best = _likeliest(most)
        least = _likeliest(
            {pid: row[labels.index("least")] for pid, row in zip(ids, rows, strict=True) if pid != best}
        )
        raw = {
            pid: {"most": round(most[pid], 6), "least": round(row[labels.index("least")], 6)}
            for pid, row in zip(ids, rows, strict=True)
        }
        return {"most": best, "least": least}, raw
    return _likeliest(probabilities), {key: round(p, 6) for key, p in probabilities.items()}


def _likeliest(probabilities: dict[str, float]) -> str:
    """The key of the highest probability (the first of equals)."""
    return max(probabilities, key=lambda key: probabilities[key])


def _rater_shown(definitions: list[dict], values: dict[str, Any]) -> dict[str, Any]:
    """The rater's values the page would ask for, in the study's order (``visible``), when
    ``values`` answers every question a rater answers (as ``rate`` asks): a ``show_if`` on a
    question no rater answers (a multi) then hides its question, since the page would not
    show it unanswered. Fewer values (the held-out figures of one question, on items whose
    people were asked it) are each question's reading as if asked."""
    answerable = {q["id"] for q in definitions if _rater_answers_it(q)}
    if not answerable <= set(values):
        return dict(values)
    by_id = {q["id"]: q for q in definitions}
    return {q["id"]: values[q["id"]] for q in definitions if q["id"] in values and visible(q, values, by_id)}


def _observations(question: dict, unit: str, value: Any, passages: list[dict]) -> list[Observation]:
    qid, kind = question["id"], question["type"]
    if per_passage(question):
        # one observation per (item, passage): the unit ``<item>#<passage id>``, as the
        # best-worst scores per passage below; its system is that passage's
        level = "ordinal" if kind == "scale" else "nominal"
        return [Observation(f"{unit}#{pid}", qid, v, level) for pid, v in value.items()]
    if kind == "scale":
        # One value per answer, as every other kind's rating: the reports read the interval
        # figures (alpha at the interval level) from this one ordinal value, and every reader
        # that counts answers (plan, the stopping rule, the adaptive priority) counts it once.
        return [Observation(unit, qid, value, "ordinal")]
    if kind == "choice":
        return [Observation(unit, qid, value, "nominal")]
    if kind == "multi":
        return [Observation(unit, f"{qid}.{o}", int(o in value), "nominal") for o in question["options"]]
    if kind == "sentences":
        count = len(sentences_of(question, passages))
        return [Observation(f"{unit}#{i}", qid, int(i in value), "nominal") for i in range(count)]
    if kind == "pick" and question["pick"] == "best_worst":
        out = [
            Observation(unit, f"{qid}.most", value["most"], "nominal"),
            Observation(unit, f"{qid}.least", value["least"], "nominal"),
        ]
        for passage in passages:
            pid = passage["id"]
            score = 1 if pid == value["most"] else -1 if pid == value["least"] else 0
            out.append(Observation(f"{unit}#{pid}", qid, score, "ordinal"))
        return out
    if kind == "pick":
        return [Observation(unit, qid, value, "nominal")]
    return []


YES_NO = (ModelOption("yes", "yes", "it does"), ModelOption("no", "no", "it does not"))


def _model_questions(question: dict) -> list[ModelQuestion]:
    """One page question (as ``_question_context`` draws it) as closed model questions; a
    question asked per passage, once per letter (``<id>.<letter>``)."""
    qid, kind, text = question["id"], question["type"], question["text"]
    if question.get("of_letter"):
        qid, text = f"{qid}.{question['of_letter']}", f"About passage {question['of_letter']}: {text}"
    if kind == "scale":
        options = tuple(ModelOption(int(p["value"]), p["value"], p["label"]) for p in question["points_list"])
        ends = (
            f" (1 = {question['ends'][0]}, {question['points']} = {question['ends'][1]})"
            if question["ends"]
            else ""
        )
        return [
            ModelQuestion(
                qid, qid, f"{text} Answer with a number from 1 to {question['points']}{ends}.", options
            )
        ]
    if kind == "choice":
        return [ModelQuestion(qid, qid, text, tuple(ModelOption(o, o) for o in question["options"]))]
    if kind == "multi":
        return [
            ModelQuestion(f"{qid}.{n}", f"{qid}.{option}", f"{text} Does “{option}” apply?", YES_NO)
            for n, option in enumerate(question["options"])
        ]
    if kind == "sentences":
        return [
            ModelQuestion(
                f"{qid}.{n}", qid, f"{text} Is sentence {n + 1} (“{sentence}”) one of them?", YES_NO
            )
            for n, sentence in question["sentence_list"]
        ]
    if kind == "pick":
        letters = tuple(
            ModelOption(x["value"], x["value"], f"passage {x['value']}") for x in question["letter_list"]
        )
        if question["pick"] == "best_worst":
            return [
                ModelQuestion(f"{qid}.most", f"{qid}.most", f"{text} Which passage is the best?", letters),
                ModelQuestion(f"{qid}.least", f"{qid}.least", f"{text} Which passage is the worst?", letters),
            ]
        tie = (ModelOption(TIE, TIE, "neither is better"),) if question["tie"] else ()
        return [ModelQuestion(qid, qid, text, letters + tie)]
    if kind == "spans":  # an open question: the model writes JSON (spans.model_instructions)
        where = f"(passage {question['passage_letter']})"
        return [ModelQuestion(qid, qid, f"{text} {where} {spans.model_instructions(question)}", ())]
    return []  # free text


def _value_from_model(question: dict, by_letter: dict, chosen, scores, passages: list[dict]) -> Any:
    qid, kind = question["id"], question["type"]
    if kind in ("scale", "choice"):
        return chosen.get(qid)
    if kind == "pick" and question["pick"] == "best_worst":
        most, least = chosen.get(f"{qid}.most"), chosen.get(f"{qid}.least")
        least_scores = scores.get(f"{qid}.least")
        if most == least and least_scores:
            others = {value: score for value, score in least_scores.items() if value != most}
            least = max(others, key=lambda value: others[value]) if others else least
        if most is None or least is None:
            return None
        return {"most": by_letter.get(most, most), "least": by_letter.get(least, least)}
    if kind == "pick":
        value = chosen.get(qid)
        return value if value in (None, TIE) else by_letter.get(value, value)
    if kind == "spans":
        output = chosen.get(qid)
        target = passages[question["passage"] - 1]["text"]
        return None if output is None else spans.from_model_output(str(output), target)
    if kind in ("multi", "sentences"):
        keys = question["options"] if kind == "multi" else range(len(sentences_of(question, passages)))
        asked = {n: f"{qid}.{n}" for n in range(len(keys))}
        if not any(key in chosen for key in asked.values()):
            return None
        yes = [n for n, key in asked.items() if chosen.get(key) == "yes"]
        margins = {n: s["yes"] - s["no"] for n, key in asked.items() if (s := scores.get(key))}
        if not yes and question["required"] and margins:
            yes = [max(margins, key=lambda n: margins[n])]
        return [question["options"][n] for n in yes] if kind == "multi" else yes
    return None  # free text: a model writes none


def _model_choices(question: dict, value: Any, letters: dict, passages: list[dict]) -> dict[str, Any]:
    """A stored answer to one question as the option values of its model questions."""
    qid, kind = question["id"], question["type"]
    if kind in ("scale", "choice"):
        return {qid: value}
    if kind == "pick" and question["pick"] == "best_worst":
        return {f"{qid}.{end}": letters[value[end]] for end in ("most", "least") if value[end] in letters}
    if kind == "pick":
        return {qid: value if value == TIE else letters[value]} if value == TIE or value in letters else {}
    if kind == "multi":
        return {f"{qid}.{n}": "yes" if o in value else "no" for n, o in enumerate(question["options"])}
    if kind == "sentences":
        count = len(sentences_of(question, passages))
        return {f"{qid}.{n}": "yes" if n in value else "no" for n in range(count)}
    if kind == "spans":
        return {qid: spans.model_choice(value, passages[question["passage"] - 1]["text"])}
    return {}


def _form_value(question: dict, value: Any) -> Any:
    """A form's text as the value ``visible`` compares (scale points are numbers)."""
    number = whole_number(value) if question["type"] == "scale" else None
    return value if number is None else number


def passage_order(item, state: dict | None) -> list[str]:
    """The recorded display order; the file's order where none was recorded (examples)."""
    ids = [p["id"] for p in item.payload["passages"]]
    order = (state or {}).get("order")
    return list(order) if order and sorted(order) == sorted(ids) else ids


def _passage_question_context(
    question: dict,
    passages: list[dict],
    letters: dict[str, str],
    pid: str,
    answer: dict,
    several: bool,
    n: int,
) -> dict:
    """A per-passage question as drawn under passage ``pid``: its inputs named
    ``q-<id>-<letter>``; its errors shown under the first passage only."""
    value = (answer.get(question["id"]) or {}).get(pid)
    context = _question_context(question, passages, letters, value)
    context["field"] = f"{context['field']}-{letters[pid]}"
    context["of_letter"] = letters[pid]  # the model's question id ``<id>.<letter>``
    context["for_letter"] = letters[pid] if several else ""
    context["errors_elsewhere"] = n > 0
    return context


def _question_context(question: dict, passages: list[dict], letters: dict[str, str], value: Any) -> dict:
    """What the template needs to draw one question: its inputs' names, values and keys,
    which of them are chosen in a worked example (``selected``), and its ``show_if`` as
    the page's script reads it."""
    field = f"q-{question['id']}"
    context = {**question, "field": field, "selected": []}
    if question.get("show_if"):
        condition = question["show_if"]
        context["show_if_field"] = f"q-{condition['question']}"
        context["show_if_values"] = json.dumps([str(v) for v in condition["in"]])
    kind = question["type"]
    if kind == "scale":
        labels = question["labels"]
        points = question["points"]
        context["points_list"] = [
            {
                "value": str(n),
                "key": SCALE_KEYS[n - 1] if n <= len(SCALE_KEYS) else "",
                "label": labels[n - 1] if len(labels) == points else "",
            }
            for n in range(1, points + 1)
        ]
        context["ends"] = (labels[0], labels[-1]) if len(labels) == 2 else None
        context["selected"] = [str(value)] if value is not None else []
    elif kind in ("choice", "multi"):
        context["option_list"] = [
            {"value": o, "key": str(n) if n <= 9 and kind == "choice" else ""}
            for n, o in enumerate(question["options"], start=1)
        ]
        context["selected"] = value if isinstance(value, list) else [value] if value is not None else []
    elif kind == "pick":
        ordered = sorted(letters.values())
        context["letter_list"] = [
            {"value": x, "key": f"{x.lower()} {n}"} for n, x in enumerate(ordered, start=1)
        ]
        if question["pick"] == "best_worst":
            chosen = value or {}
            context["rows"] = [
                {"end": end, "field": f"{field}-{end}", "selected": letters.get(chosen.get(end, ""), "")}
                for end in ("most", "least")
            ]
        else:
            context["selected"] = [TIE if value == TIE else letters.get(value, "")] if value else []
            context["tie_key"] = f"t {len(ordered) + 1}"
    elif kind == "sentences":
        target = passages[question["passage"] - 1]["id"]
        context["passage_letter"] = letters[target]
        context["sentence_list"] = list(enumerate(sentences_of(question, passages)))
        context["selected"] = [str(i) for i in value or []]
    elif kind == "text":
        context["selected"] = [value] if value else []
    elif kind == "spans":
        context.update(_spans_context(question, passages, letters, value))
    return context


def _spans_context(question: dict, passages: list[dict], letters: dict[str, str], value: Any) -> dict:
    """The passage as selectable tokens with their offsets, the spans an example marked,
    and the category and severity lists (the page's script reads the marked spans from the
    hidden field, as JSON)."""
    target = passages[question["passage"] - 1]
    marked = value if isinstance(value, dict) else None
    return {
        "passage_letter": letters[target["id"]],
        "token_list": spans.tokens(target["text"], marked),
        "span_list": spans.spans_shown(question, target["text"], marked),
        "selected": [json.dumps(marked["spans"])] if marked else [],
        "score_row": {
            "field": f"q-{question['id']}-score",
            "selected": "" if not marked or marked.get("score") is None else str(marked["score"]),
        },
        "score_range": (spans.SCORE_LOW, spans.SCORE_HIGH),
    }


def _quality_criterion(q: dict) -> QualityCriterion:
    text, kind = q.get("text", ""), q.get("type")
    if kind == "scale":
        labels = q.get("labels") or []
        ends = f", ends labelled {labels[0]!r} and {labels[-1]!r}" if labels else ""
        points = tuple(range(1, int(q.get("points", 5)) + 1))
        shown = f"one of several options (a row of points{ends})"
        return QualityCriterion(q["id"], text, points, shown, False, "direct quality estimation")
    if kind == "pick":
        pairwise = q.get("pick") == "pairwise"
        values = ("first", "second", *(("tie",) if q.get("tie") else ())) if pairwise else ("best", "worst")
        elicitation = "relative quality estimation (including ranking)"
        return QualityCriterion(q["id"], text, values, "one of several options", True, elicitation)
    if kind in ("choice", "multi"):
        shown = "one of several options" if kind == "choice" else "check-boxes"
        options = tuple(q.get("options", []))
        return QualityCriterion(q["id"], text, options, shown, False, "output classification or labelling")
    none = "no rating instrument"
    if kind in ("sentences", "spans"):  # marking parts of the passage: an annotation
        return QualityCriterion(
            q["id"], text, None, none, False, "evaluation through post-editing/annotation"
        )
    return QualityCriterion(
        q["id"], text, None, none, False, "qualitative feedback (e.g. via comments entered in a text box)"
    )
