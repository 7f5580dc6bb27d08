"""A study written back out as a study file (docs/formats.md): the builder's download and
each version's snapshot (``versions``)."""

from __future__ import annotations

from annotation.models import Exam, Item, Study

from .study_fields import StudyFields


def study_file_of(study: Study, *, items: bool = True) -> dict:
    """The study as a study file (docs/formats.md): loading it (the upload page, the API,
    ``loadstudy``) under a free slug gives a study with the same fields, config and items.
    ``items=False``: the rest alone (what the builder's form shows)."""
    data = dict(StudyFields(study).data)
    data["config"] = study.config
    if study.examples:
        data["examples"] = study.examples
    if study.faq:
        data["faq"] = study.faq
    if study.qualification is not None:
        data["qualification"] = study.qualification.study.slug
    exam = Exam.objects.filter(study=study).first()
    if exam is not None:
        data["exam"] = {
            "pass_mark": exam.pass_mark,
            "attempts": exam.attempts_allowed,
            "training": exam.training,
        }
    if items:
        data["items"] = [item_file_entry(item) for item in study.items.order_by("id")]
    return data


def item_file_entry(item: Item) -> dict:
    entry: dict = {"external_id": item.external_id, "payload": item.payload}
    if item.is_attention_check:
        entry["attention_check"] = True
    if item.gold is not None:
        entry["gold"] = item.gold
    if item.provenance:
        entry["provenance"] = item.provenance
    if item.explanation:
        entry["explanation"] = item.explanation
    return entry
