"""The versioned prompt files (``prompts/*.json``) and the one rendering of each prompt.

A file holds an instruction and few-shot examples (our own wording) with a ``version``;
the layout of a block (``Question: …`` / ``Reasoning: …``) is written here once, and
``parsing`` reads the model's continuation of the same layout. Provenance records
``<name>@<version>`` of every file a record was made with, so a changed file is a new
version and its records are new records.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .questions import PAIRWISE, YES_NO, Question

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
MODES = ("cot", "posthoc")
CHOICE_WORDS = {"yes": "Yes", "no": "No", "response_1": "Response 1", "response_2": "Response 2"}
BLOCK_END = "\n\n"  # blocks are separated by a blank line; a generation ends at the first one


@dataclass(frozen=True)
class PromptFile:
    name: str
    version: str
    instruction: str
    examples: tuple[dict, ...]

    @property
    def tag(self) -> str:
        """What provenance records: ``explain-yes_no@1``."""
        return f"{self.name}@{self.version}"


class PromptFileError(ValueError):
    """A shipped prompt file lacks a field: a packaging mistake, reported with the file's name."""


@cache
def prompt_file(task: str, variant: str) -> PromptFile:
    """``prompts/<task>_<variant>.json`` (task ``explain`` or ``followups``), checked once."""
    path = PROMPT_DIR / f"{task}_{variant}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for key, kind in (("name", str), ("version", (str, int)), ("instruction", str), ("examples", list)):
        if not isinstance(data.get(key), kind):
            raise PromptFileError(f"{path.name}: '{key}' is missing or of the wrong type.")
    if not data["examples"]:
        raise PromptFileError(f"{path.name}: no examples.")
    return PromptFile(
        data["name"], str(data["version"]), data["instruction"].strip(), tuple(data["examples"])
    )


def _yes_no_block(question: str, mode: str, answer: str | None = None, reasoning: str = "") -> str:
    if mode == "cot":
        head = f"Question: {question}\nReasoning:"
        return head if answer is None else f"{head} {reasoning} So the answer is {answer}."
    head = f"Question: {question}\nAnswer:"
    return head if answer is None else f"{head} {CHOICE_WORDS[answer]}. Reason: {reasoning}"


def _pairwise_block(
    context: str, responses, mode: str, answer: str | None = None, reasoning: str = ""
) -> str:
    shown = f"Context: {context}\nResponse 1: {responses[0]}\nResponse 2: {responses[1]}\n"
    if mode == "cot":
        head = f"{shown}Reasoning:"
        return (
            head
            if answer is None
            else f"{head} {reasoning} So the better response is {CHOICE_WORDS[answer]}."
        )
    head = f"{shown}Better response:"
    return head if answer is None else f"{head} {CHOICE_WORDS[answer]}. Reason: {reasoning}"


def explain_block(question: Question, mode: str, answer: str | None = None, reasoning: str = "") -> str:
    """A question in ``mode``: open (``answer`` None: the model continues) or answered."""
    if question.variant == YES_NO:
        return _yes_no_block(question.text, mode, answer, reasoning)
    return _pairwise_block(question.context, question.responses, mode, answer, reasoning)


def explain_prompt(question: Question, mode: str) -> str:
    """The few-shot prompt that asks for the answer and explanation in ``mode``."""
    file = prompt_file("explain", question.variant)
    shots = [
        explain_block(
            _example_question(example, question.variant), mode, example["answer"], example["reasoning"]
        )
        for example in file.examples
    ]
    return BLOCK_END.join([file.instruction, *shots, explain_block(question, mode)])


def _example_question(example: dict, variant: str) -> Question:
    if variant == YES_NO:
        return Question("example", YES_NO, text=example["question"])
    return Question("example", PAIRWISE, context=example["context"], responses=tuple(example["responses"]))


def followup_block(starter: Question, answer: str, explanation: str, followup: dict | None = None) -> str:
    """The starter with the model's answer and explanation, then a follow-up (open when None)."""
    if starter.variant == YES_NO:
        head = (
            f"Starter question: {starter.text}\nAI's answer: {CHOICE_WORDS[answer]}\n"
            f"AI's explanation: {explanation}\nFollow-up question:"
        )
        return head if followup is None else f"{head} {followup['question']}"
    head = (
        f"Starter context: {starter.context}\nStarter response 1: {starter.responses[0]}\n"
        f"Starter response 2: {starter.responses[1]}\nAI's choice: {CHOICE_WORDS[answer]}\n"
        f"AI's explanation: {explanation}\nFollow-up context:"
    )
    if followup is None:
        return head
    first, second = followup["responses"]
    return f"{head} {followup['context']}\nFollow-up response 1: {first}\nFollow-up response 2: {second}"


def followups_prompt(starter: Question, answer: str, explanation: str) -> str:
    """The few-shot prompt asking for one follow-up the explanation should help a reader answer."""
    file = prompt_file("followups", starter.variant)
    shots = [
        followup_block(
            _example_question(example, starter.variant),
            example["answer"],
            example["explanation"],
            example["followup"],
        )
        for example in file.examples
    ]
    return BLOCK_END.join([file.instruction, *shots, followup_block(starter, answer, explanation)])
