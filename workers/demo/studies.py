"""The demo that `make run` shows: the documented example studies (``docs/examples/``), one
copy of each, with seeded answers by three made-up lab annotators for the kinds that have
some (``docs/examples/answers/<slug>.jsonl``, written by ``docs/tools/demo_answers.py``), and
those studies' reports computed, so that a newcomer's dashboards show agreement and
comparison tables and the adjudication page lists disagreements.

The boundary game's demo is built by ``loaddemogame`` instead, so its example is left out.
It lives in ``workers`` beside the game's demo because it uses both ``annotation`` (the
studies, the import of answers) and ``scoring`` (their reports), which only the top layer
may (``docs/architecture.md``); it needs no model stack.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from annotation.models import Participant, Study
from annotation.services.authoring.answer_imports import ImportResult, import_responses
from annotation.services.authoring.studies import load_study_file
from scoring.services import compute_study_reports, reports_are_stale

EXAMPLES_DIR = Path(settings.BASE_DIR) / "docs" / "examples"
ANSWERS_DIR = EXAMPLES_DIR / "answers"
NOT_DEMO = {"boundary.json"}  # the game's demo comes from loaddemogame


@dataclass(frozen=True)
class DemoStudy:
    study: Study
    answers: ImportResult | None  # None: the study has no seeded answers
    reports: int | None  # report rows computed now; None when they were current or not needed


def demo_study_files() -> list[tuple[Path, dict]]:
    """The example study files the demo loads, qualification exams first (the studies that
    require one name it by its slug)."""
    files = [
        (path, json.loads(path.read_text(encoding="utf-8")))
        for path in sorted(EXAMPLES_DIR.glob("*.json"))
        if path.name not in NOT_DEMO
    ]
    return sorted(files, key=lambda file: "exam" not in file[1])


def load_demo_study(data: dict) -> DemoStudy:
    """Load (or refresh) one demo study, import its seeded answers (idempotent: answers
    already there are skipped) and compute its reports when they are missing or stale.

    The seeded answers take their items' slots like any answer, so the study is loaded with
    room for them on top of the file's ``annotations_per_item``: visitors trying the demo
    still find every slot the file promises."""
    lines = seeded_answer_lines(data["slug"])
    if lines:
        annotators = {json.loads(line)["participant"] for line in lines}
        data = {**data, "annotations_per_item": data.get("annotations_per_item", 1) + len(annotators)}
    study = load_study_file(data).study
    if not lines:
        return DemoStudy(study, None, None)
    imported = import_responses(study, lines, source=Participant.Source.LAB)
    # The seeded kinds need no sentence encoder (only simulation's cosine does).
    reports = compute_study_reports(study).rows if reports_are_stale(study) else None
    return DemoStudy(study, imported, reports)


def seeded_answer_lines(slug: str) -> list[str]:
    path = ANSWERS_DIR / f"{slug}.jsonl"
    if not path.is_file():
        return []
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
