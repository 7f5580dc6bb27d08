"""Worked examples and FAQ of a study's instructions: checked by the study's kind when the
study file is loaded, rendered read-only (with the answer we give and why) on the consent
and instructions pages."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from annotation.errors import InputError, checked, flatten_errors
from annotation.kinds.base import StrictSerializer
from annotation.models import Item, Study

from .input_rows import collect_rows, list_rows

MAX_EXAMPLES = 20
MAX_FAQ = 40


class ExampleFields(StrictSerializer):
    title = serializers.CharField(max_length=200, required=False)
    payload = serializers.DictField()
    answer = serializers.DictField()
    explanation = serializers.CharField(max_length=10000)


class FaqFields(StrictSerializer):
    question = serializers.CharField(max_length=500)
    answer = serializers.CharField(max_length=5000)


def check_examples(kind, config: dict, raw, study: Study) -> list[dict]:
    """Each example's payload as an item's, its answer as gold (some fields may be left out).

    Errors name the place: ``examples[1].answer.ratings.edit_main``.
    """
    rows = _check_list(raw, "examples", ExampleFields, MAX_EXAMPLES)
    errors: dict[str, list[str]] = {}
    for index, row in enumerate(rows):
        place = f"examples[{index}]"
        try:
            row["payload"] = kind.validate_payload(row["payload"], config)
            probe = Item(study=study, external_id=f"example-{index + 1}", payload=row["payload"])
            try:
                row["answer"] = kind.validate_gold(probe, row["answer"])
            except ValidationError as exc:
                errors.update(flatten_errors(exc.detail, f"{place}.answer"))
        except ValidationError as exc:
            errors.update(flatten_errors(exc.detail, f"{place}.payload"))
    if errors:
        raise InputError(errors)
    return rows


def check_faq(raw) -> list[dict]:
    return _check_list(raw, "faq", FaqFields, MAX_FAQ)


def _check_list(raw, name: str, shape, most: int) -> list[dict]:
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > most:
        raise InputError({name: [f"A list of at most {most} objects."]})

    def check(entry) -> dict:
        if not isinstance(entry, dict):
            raise InputError({"": ["Expected an object."]})
        return checked(shape, entry)

    return list(collect_rows(list_rows(enumerate(raw), name), check))


def example_context(study: Study, example: dict, *, prefix: str) -> dict:
    """The context that renders one example with the kind's template, inputs disabled."""
    item = Item(study=study, external_id=prefix, payload=example["payload"])
    context = study.task_kind.review_context(item, example["answer"])
    return {**context, "prefix": prefix, "errors": {}, "submitted": {}, "readonly": True}
