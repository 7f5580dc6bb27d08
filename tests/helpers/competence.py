"""A claim study with three reliable annotators and one who answers at random, its reports
computed: the spammer's competence is the lowest (annotator competence tests)."""

from __future__ import annotations

from annotation.models import Study
from annotation.services.authoring.studies import load_study_file
from scoring.services import compute_study_reports
from tests.conftest import claim_study_file
from tests.factories import AnsweredResponseFactory

LABELS = ("supports", "contradicts", "neutral")
ITEMS = 12
RELIABLE = ("ann", "bob", "cy")
SPAMMER = "spam"


def truth(index: int) -> str:
    return LABELS[index % 3]


def spam(index: int) -> str:
    """Unrelated to the truth: the label two steps on, every other item a third."""
    return LABELS[(index * 5 + 1) % 3] if index % 2 else LABELS[(index + 2) % 3]


def slip(index: int) -> str:
    """cy's wrong answer on every third item."""
    return LABELS[(index + 1) % 3]


def competence_study(owner, slug: str = "quality") -> Study:
    study = load_study_file(
        claim_study_file(slug=slug, items=ITEMS, annotations_per_item=4), owner=owner
    ).study
    specs = []
    for index in range(ITEMS):
        item = f"c{index}"
        for name in RELIABLE:  # cy slips on a third of the items
            label = slip(index) if name == "cy" and index % 3 == 0 else truth(index)
            specs.append({"participant": name, "item": item, "answer": {"label": label, "evidence": [0]}})
        specs.append(
            {"participant": SPAMMER, "item": item, "answer": {"label": spam(index), "evidence": [2]}}
        )
    AnsweredResponseFactory.from_specs(study, specs)
    compute_study_reports(study)
    return study
