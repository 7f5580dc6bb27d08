"""Write the demo's seeded answers: `docs/examples/answers/<slug>.jsonl`, one file per demo
study of the kinds claim, likert, ranking and plausibility and per questionnaire example,
in the `importresponses` format.

Three made-up lab annotators (`lab-ana`, `lab-ben`, `lab-chen`) answer every item that is not
an attention check. Each item has a leaning (the gold label, a rating per statement, a best
and worst system) and each annotator strays from it now and then, so the demo's dashboards
show agreement figures that are neither perfect nor nil, and its adjudication page lists a
few disagreements. Every draw comes from one seeded generator: running this again writes
the same files. `loaddemo` imports them through the import service and computes the reports.

    python docs/tools/demo_answers.py

Standard library only.
"""

from __future__ import annotations

import json
import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
OUT = EXAMPLES / "answers"
ANNOTATORS = ("lab-ana", "lab-ben", "lab-chen")
SEED = 2026
STARTED = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LABELS = ("supports", "contradicts", "neutral")
LIKERT_QUESTIONS = (  # the kind's default statements (annotation/kinds/likert.py)
    "edit_main",
    "edit_related",
    "factual_main",
    "factual_related",
    "internal_main",
    "internal_related",
    "cross_passage",
    "topicality",
    "naturalness",
)
RANKING_CRITERIA = ("consistency", "fluency")
PLAUSIBILITY = ("no", "moderate", "yes")


def claim_answer(item: dict, rng: random.Random) -> dict:
    gold = item["gold"]
    label = gold["label"] if rng.random() < 0.75 else rng.choice([x for x in LABELS if x != gold["label"]])
    if label == "neutral":
        return {"label": label, "evidence": []}
    evidence = list(gold.get("evidence") or [0])
    if len(evidence) > 1 and rng.random() < 0.4:
        evidence = evidence[:1]  # marked only the first of the evidence sentences
    return {"label": label, "evidence": evidence}


def likert_leaning(rng: random.Random) -> dict[str, int]:
    return {question: rng.randint(2, 6) for question in LIKERT_QUESTIONS}


def likert_answer(leaning: dict[str, int], rng: random.Random) -> dict:
    ratings = {}
    for question, centre in leaning.items():
        step = rng.choice((-3, -1, 0, 0, 0, 1, 1)) if rng.random() < 0.9 else rng.choice((-3, 3))
        ratings[question] = min(7, max(1, centre + step))
    return {"ratings": ratings}


def ranking_answer(item: dict, leaning: list[str], rng: random.Random) -> dict:
    systems = [passage["system"] for passage in item["payload"]["passages"]]
    choices = {}
    for criterion in RANKING_CRITERIA:
        order = list(leaning) if rng.random() < 0.7 else rng.sample(systems, len(systems))
        choices[criterion] = {"most": order[0], "least": order[-1]}
    return {"shown": rng.sample(systems, len(systems)), "choices": choices}


def plausibility_answer(item: dict, leaning: dict[str, int], rng: random.Random) -> dict:
    ratings = {}
    for explanation in item["payload"]["explanations"]:
        level = leaning[explanation["id"]] + (rng.choice((-1, 1)) if rng.random() < 0.25 else 0)
        ratings[explanation["id"]] = PLAUSIBILITY[min(2, max(0, level))]
    return {"ratings": ratings}


def ranking_leaning(item: dict, rng: random.Random) -> list[str]:
    """The systems from the passage that reads best to the one that reads worst."""
    systems = [passage["system"] for passage in item["payload"]["passages"]]
    return rng.sample(systems, len(systems))


def plausibility_leaning(item: dict, rng: random.Random) -> dict[str, int]:
    return {explanation["id"]: rng.randint(0, 2) for explanation in item["payload"]["explanations"]}


REASONS = (  # what an annotator writes in a free-text box, when they write anything
    "Short and to the point.",
    "Easy to follow.",
    "The details are right.",
    "I had to read it twice.",
)


def questionnaire_leaning(item: dict, rng: random.Random) -> dict:
    """The passages from best to worst (people lean to the fuller one, not always) and, per
    question, the answer the item leans to."""
    passages = item["payload"]["passages"]
    order = [p["id"] for p in sorted(passages, key=lambda p: -len(p["text"]) + rng.gauss(0, 40))]
    return {"order": order, "draws": rng.random()}


def questionnaire_answer(study: dict, item: dict, leaning: dict, rng: random.Random) -> dict:
    """Each question the page asks, by type; the item's leaning per question comes from a
    generator seeded by the leaning, so every annotator shares it and strays on their own."""
    own = random.Random(leaning["draws"])
    answer: dict = {}
    for question in study["config"]["questions"]:
        leans_to = _question_leaning(question, item, leaning["order"], own)
        if _asked(question, answer):
            value = _question_answer(question, item, leaning["order"], leans_to, rng)
            if value is not None:
                answer[question["id"]] = value
    return answer


def _asked(question: dict, answer: dict) -> bool:
    """A question's ``show_if`` met by the answers above it (the rule is the kind's
    ``annotation.kinds.questions.visible``; the import checks every answer with it)."""
    condition = question.get("show_if")
    if not condition:
        return True
    wanted = condition["in"] if "in" in condition else [condition["equals"]]
    given = answer.get(condition["question"])
    return any(value in wanted for value in (given if isinstance(given, list) else [given]))


def _sentence_count(question: dict, item: dict) -> int:
    text = item["payload"]["passages"][question.get("passage", 1) - 1]["text"]
    return len(re.split(r"(?<=[.!?])\s+", text.strip()))


def _question_leaning(question: dict, item: dict, order: list[str], rng: random.Random):
    kind = question["type"]
    if kind == "scale":
        return rng.randint(2, max(2, question.get("points", 5) - 1))
    if kind in ("choice", "multi"):
        return rng.choice(question["options"])
    if kind == "sentences":
        return rng.randrange(_sentence_count(question, item))
    return None  # picks lean by the passages' order; free text by nothing


def _question_answer(question: dict, item: dict, order: list[str], leans_to, rng: random.Random):
    kind, strays = question["type"], rng.random() < 0.25
    if kind == "scale":
        return min(question.get("points", 5), max(1, leans_to + rng.choice((-1, 0, 0, 1))))
    if kind == "choice":
        return rng.choice(question["options"]) if strays else leans_to
    if kind == "multi":
        return sorted({leans_to, rng.choice(question["options"])} if strays else {leans_to})
    if kind == "sentences":
        return sorted({leans_to, rng.randrange(_sentence_count(question, item))} if strays else {leans_to})
    if kind == "text":
        return rng.choice(REASONS) if question.get("required", True) or rng.random() < 0.4 else None
    ranked = rng.sample(order, len(order)) if strays else order
    if question["pick"] == "best_worst":
        return {"most": ranked[0], "least": ranked[-1]}
    if question["pick"] == "pairwise" and question.get("tie") and rng.random() < 0.1:
        return "tie"
    return ranked[0]


# Per kind: the item's leaning (drawn once per item), then each annotator's answer from it.
KINDS = {
    "claim": (lambda item, rng: None, lambda item, leaning, rng: claim_answer(item, rng)),
    "likert": (lambda item, rng: likert_leaning(rng), lambda item, leaning, rng: likert_answer(leaning, rng)),
    "ranking": (ranking_leaning, ranking_answer),
    "plausibility": (plausibility_leaning, plausibility_answer),
    "questionnaire": (questionnaire_leaning, None),  # the answer reads the study's questions
}


def answers_for(study: dict, rng: random.Random) -> list[dict]:
    """One answer per (annotator, item) of the study that is not an attention check."""
    draw_leaning, draw_answer = KINDS[study["kind"]]
    if draw_answer is None:
        draw_answer = lambda item, leaning, rng: questionnaire_answer(study, item, leaning, rng)  # noqa: E731
    lines = []
    for item in (item for item in study["items"] if not item.get("attention_check")):
        leaning = draw_leaning(item, rng)
        for annotator in ANNOTATORS:
            answer = draw_answer(item, leaning, rng)
            lines.append({"participant": annotator, "item": item["external_id"], "answer": answer})
    for number, line in enumerate(lines):
        shown = STARTED + timedelta(minutes=3 * number)
        answered = shown + timedelta(seconds=rng.randint(25, 110))
        line["shown_at"], line["answered_at"] = iso(shown), iso(answered)
    return lines


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def main() -> None:
    rng = random.Random(SEED)
    OUT.mkdir(exist_ok=True)
    names = ("claim", "likert", "ranking", "plausibility")
    for name in (*names, "questionnaire-pairwise", "questionnaire-best-worst", "questionnaire-errors"):
        study = json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))
        lines = answers_for(study, rng)
        path = OUT / f"{study['slug']}.jsonl"
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(EXAMPLES.parent.parent)}: {len(lines)} answers")


if __name__ == "__main__":
    main()
