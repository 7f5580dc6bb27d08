"""Answers read out of generated text: strictly, so an unclear output is recorded as such.

A model's continuation is cut at the end of its block (the first blank line); what is
left must state one answer in the layout of the prompt (``prompts``). Conflicting or
hedged answers ("yes or no", "the answer is yes … the answer is no") and missing ones are
``Parsed(answer=None, problem=…)``: the caller keeps the raw text and counts them; no
answer is ever guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .prompts import BLOCK_END
from .questions import PAIRWISE, YES_NO

MAX_TEXT = 5000  # the simulation payload's limit per text
MAX_FOLLOWUP = 600


@dataclass(frozen=True)
class Parsed:
    answer: str | None  # yes/no/response_1/response_2; None: unparseable
    explanation: str = ""  # the reasoning, as the page shows it
    problem: str = ""  # why it is unparseable


def block_of(text: str) -> str:
    """The model's block: up to the first blank line, whitespace tidied at the ends."""
    return text.replace("\r\n", "\n").split(BLOCK_END, 1)[0].strip()


_QUOTE = r"[\s:\"'*`“”‘’(\[]*"
_YES_NO = r"(yes|no)\b"
_RESPONSE = r"response\s*([12])\b"
_HEDGE = re.compile(r"\s*(?:or|and|/|nor)\s*[\"'*`]*\s*(?:yes|no|response\s*[12])\b", re.IGNORECASE)
_COT = {
    YES_NO: re.compile(r"\bthe answer is" + _QUOTE + _YES_NO, re.IGNORECASE),
    PAIRWISE: re.compile(r"\bthe better response is" + _QUOTE + _RESPONSE, re.IGNORECASE),
}
_POSTHOC = {
    YES_NO: re.compile(r"^(?:answer\s*:)?" + _QUOTE + _YES_NO, re.IGNORECASE),
    PAIRWISE: re.compile(r"^(?:better response\s*:)?" + _QUOTE + _RESPONSE, re.IGNORECASE),
}
_REASON = re.compile(r"^[\s.,:;!\-–—]*(?:reason\s*:)?\s*", re.IGNORECASE)


def _choice(variant: str, word: str) -> str:
    return word.lower() if variant == YES_NO else f"response_{word}"


def parse_answer(text: str, variant: str, mode: str) -> Parsed:
    """The answer and explanation of an explanation or a follow-up answer in ``mode``."""
    block = block_of(text)
    if not block:
        return Parsed(None, problem="empty output")
    return _parse_cot(block, variant) if mode == "cot" else _parse_posthoc(block, variant)


def _parse_cot(block: str, variant: str) -> Parsed:
    matches = list(_COT[variant].finditer(block))
    if not matches:
        return Parsed(None, problem="no final answer")
    answers = {_choice(variant, m.group(1)) for m in matches}
    if len(answers) > 1:
        return Parsed(None, problem="conflicting answers")
    first = matches[0]
    if _HEDGE.match(block, first.end()):
        return Parsed(None, problem="hedged answer")
    end = block.find(".", first.end())
    explanation = block[: end + 1 if end >= 0 else len(block)].strip()
    if len(explanation) > MAX_TEXT:
        return Parsed(None, problem="explanation too long")
    return Parsed(answers.pop(), explanation)


def _parse_posthoc(block: str, variant: str) -> Parsed:
    match = _POSTHOC[variant].match(block)
    if match is None:
        return Parsed(None, problem="no answer first")
    if _HEDGE.match(block, match.end()):
        return Parsed(None, problem="hedged answer")
    answer = _choice(variant, match.group(1))
    explanation = _REASON.sub("", block[match.end() :], count=1).strip()
    if not explanation:
        return Parsed(None, problem="no explanation")
    if len(explanation) > MAX_TEXT:
        return Parsed(None, problem="explanation too long")
    return Parsed(answer, explanation)


@dataclass(frozen=True)
class ParsedFollowup:
    content: dict | None  # {"question"} or {"context", "responses"}; None: unparseable
    problem: str = ""


_PAIR = re.compile(
    r"^(?P<context>.+?)\n\s*Follow-up response 1:(?P<first>.+?)\n\s*Follow-up response 2:(?P<second>.+)$",
    re.DOTALL | re.IGNORECASE,
)


def parse_followup(text: str, variant: str) -> ParsedFollowup:
    """A generated follow-up: one yes/no question (ends with '?'), or a context and two responses."""
    block = block_of(text)
    if variant == YES_NO:
        question = " ".join(block.split("\n", 1)[0].split())
        if not question:
            return ParsedFollowup(None, "empty output")
        if not question.endswith("?"):
            return ParsedFollowup(None, "not a question")
        if len(question) > MAX_FOLLOWUP:
            return ParsedFollowup(None, "too long")
        return ParsedFollowup({"question": question})
    match = _PAIR.match(block)
    if match is None:
        return ParsedFollowup(None, "not a context with two responses")
    parts = [" ".join(match.group(name).split()) for name in ("context", "first", "second")]
    if not all(parts):
        return ParsedFollowup(None, "an empty part")
    if any(len(part) > MAX_FOLLOWUP for part in parts):
        return ParsedFollowup(None, "too long")
    return ParsedFollowup({"context": parts[0], "responses": parts[1:]})


def followup_text(content: dict) -> str:
    """One string per follow-up, for duplicate detection and similarity."""
    if "question" in content:
        return content["question"]
    return " || ".join([content["context"], *content["responses"]])
