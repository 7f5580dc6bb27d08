"""Prompts for LLM raters and simulators, and the parser of their free-text answers.

Plain Python (no torch): one prompt per closed question of a ``ModelTask``, so a long
page still leaves the question and its allowed answers at the end, where a model reads
them last (and where a prompt cut to the model's length keeps them). Few-shot examples
are people's answers to *other* items of the study, drawn with a seeded generator.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from annotation.kinds.base import ModelOption, ModelQuestion, ModelTask, TaskKind
from annotation.services.analysis.model_answers import HumanExample

# The version of the wording below; part of each rater's definition (a new wording is a new rater).
PROMPT_VERSION = "llm-rater-1"
ANSWER_CUE = "Answer:"
INTRO = (
    "You are answering a survey question about the material below, as a careful human "
    "participant would. Reply with exactly one of the allowed answers."
)


@dataclass(frozen=True)
class Shot:
    """One worked example: another item's material, the same question, a person's answer."""

    material: str
    question: ModelQuestion
    answer: ModelOption
    item_id: str  # the example item's external id (recorded, so a test can check it)


def allowed_answers(question: ModelQuestion) -> str:
    if not question.options:  # an open question: its text says what to write
        return "as the question says"
    return "; ".join(
        f"{option.text} ({option.label})" if option.label and option.label != option.text else option.text
        for option in question.options
    )


def question_block(material: str, question: ModelQuestion, answer: str = "") -> str:
    block = (
        f"{material}\n\nQuestion: {question.text}\nAllowed answers: {allowed_answers(question)}\n{ANSWER_CUE}"
    )
    return f"{block} {answer}" if answer else block


def build_prompt(
    instructions: str, task: ModelTask, question: ModelQuestion, shots: Sequence[Shot] = ()
) -> str:
    """The study's instructions, the examples, then this item's material and question,
    ending with the answer cue (the model's answer follows it, after a space)."""
    parts = [INTRO]
    if instructions.strip():
        parts.append(f"Instructions given to the participants:\n{instructions.strip()}")
    for number, shot in enumerate(shots, start=1):
        parts.append(f"Example {number}:\n{question_block(shot.material, shot.question, shot.answer.text)}")
    parts.append(("Now your turn:\n" if shots else "") + question_block(task.material, question))
    return "\n\n".join(parts)


def choose_examples(
    examples: Sequence[HumanExample], item_pk: int, shots: int, rng: random.Random
) -> list[HumanExample]:
    """Up to ``shots`` people's answers to items other than ``item_pk``, from as many
    different items as there are (one answer per item first), in a seeded random order."""
    others = [example for example in examples if example.item.pk != item_pk]
    rng.shuffle(others)
    first: list[HumanExample] = []
    rest: list[HumanExample] = []
    seen: set[int] = set()
    for example in others:
        (rest if example.item.pk in seen else first).append(example)
        seen.add(example.item.pk)
    return (first + rest)[:shots]


@dataclass(frozen=True)
class PreparedExample:
    """A person's answer as a model would have been asked it: the item's task and, per
    question id, the option value the person chose."""

    item_id: str
    task: ModelTask
    choices: dict


def prepare_examples(kind: TaskKind, examples: Sequence[HumanExample]) -> list[PreparedExample]:
    return [
        PreparedExample(
            example.item.external_id,
            kind.model_task(example.item, example.state),
            kind.model_choices(example.item, example.state, example.answer),
        )
        for example in examples
    ]


def shots_for(question: ModelQuestion, examples: Sequence[PreparedExample], rng: random.Random) -> list[Shot]:
    """Each example turned into a shot of ``question``: the example's own question with the
    same key (the same id when it has one), answered as the person did. Examples whose
    person left that question open are skipped."""
    shots = []
    for example in examples:
        same_key = [q for q in example.task.questions if q.key == question.key and q.id in example.choices]
        if not same_key:
            continue
        matched = next((q for q in same_key if q.id == question.id), None) or rng.choice(same_key)
        given = example.choices[matched.id]
        option = next((o for o in matched.options if o.value == given), None)
        if not matched.options:  # an open question: the person's answer as the model writes it
            option = ModelOption(given, str(given))
        if option is not None:
            shots.append(Shot(example.task.material, matched, option, example.item_id))
    return shots


_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


# Words a model may put before its answer ("Answer: the answer is 5").
LEAD_IN = {"answer", "the", "is", "my", "final", "i", "would", "say", "choose", "pick", "it", "s"}


def reply_answer(output: str, question: ModelQuestion) -> ModelOption | None:
    """What a generated reply answers: an open question's whole reply (its kind reads it),
    else ``parse_option``'s allowed answer."""
    if not question.options:
        return ModelOption(output.strip(), output.strip()) if output.strip() else None
    return parse_option(output, question.options)


def parse_option(output: str, options: Sequence[ModelOption]) -> ModelOption | None:
    """The allowed answer a free-text output gives, or None when it gives none (never a guess).

    The output's first non-empty line must start with an option, after lead-in words
    ("the answer is"); the longest option wins where two match ("response 1" over
    "response"). Anything else ("I have no idea", two options at once) is None.
    """
    line = next((part for part in output.strip().splitlines() if part.strip()), "")
    words = _words(line)
    start = 0
    while start < len(words) and words[start] in LEAD_IN and not _starts_option(words[start:], options):
        start += 1
    found = [
        (len(pieces), option)
        for option in options
        if (pieces := _words(option.text)) and words[start : start + len(pieces)] == pieces
    ]
    if not found:
        return None
    longest = max(length for length, _ in found)
    best = [option for length, option in found if length == longest]
    return best[0] if len(best) == 1 else None


def _starts_option(words: list[str], options: Sequence[ModelOption]) -> bool:
    return any((pieces := _words(o.text)) and words[: len(pieces)] == pieces for o in options)


def prompt_template() -> str:
    """The prompt's wording with placeholders where a study's text goes (one example shown):
    what a judge's record keeps, with its hash, so that a new wording is a new record."""
    question = ModelQuestion("question", "question", "{question}", (ModelOption("{answer}", "{answer}"),))
    task = ModelTask("{material}", (question,))
    shot = Shot("{example material}", question, ModelOption("{example answer}", "{example answer}"), "")
    return build_prompt("{instructions}", task, question, [shot])
