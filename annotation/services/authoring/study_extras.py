"""The parts of a study file beyond the study's own fields and its items: worked examples,
FAQ, an ``exam`` block (the study is a qualification exam) and ``qualification`` (the exam
a study requires). Checked with the rest of the file, written in the same transaction."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.errors import InputError
from annotation.models import Study

from .exam_settings import check_exam_block, check_qualification, write_exam_settings
from .guides import check_examples, check_faq

EXTRA_FIELDS = {"examples", "faq", "exam", "qualification"}


@dataclass(frozen=True)
class StudyExtras:
    study_fields: dict  # examples, faq, qualification: values for the Study row
    exam: dict | None  # {pass_mark, attempts} when the study is an exam


def check_study_extras(
    kind, config: dict, data: dict, fields: dict, items: list[dict], *, owner=None
) -> StudyExtras:
    """All errors of the extra parts at once, each naming its place (``owner``: who will own
    the study, whose exams it may require)."""
    probe = Study(config=config, **fields)
    errors: dict[str, list[str]] = {}
    values: dict = {}
    checks = {
        "examples": lambda: check_examples(kind, config, data.get("examples"), probe),
        "faq": lambda: check_faq(data.get("faq")),
        "qualification": lambda: check_qualification(
            data.get("qualification"), slug=fields["slug"], owner=owner
        ),
        "exam": lambda: check_exam_block(data.get("exam"), slug=fields["slug"], items=items, fields=fields),
    }
    for name, check in checks.items():
        try:
            values[name] = check()
        except InputError as exc:
            errors.update(exc.errors)
    if values.get("exam") and values.get("qualification"):
        errors["qualification"] = ["An exam cannot itself require an exam."]
    if errors:
        raise InputError(errors)
    exam = values.pop("exam")
    return StudyExtras(study_fields=values, exam=exam)


def write_study_extras(study: Study, extras: StudyExtras) -> None:
    write_exam_settings(study, extras.exam)
