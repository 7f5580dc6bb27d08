"""What the kind unit tests share: an unsaved item of a kind, and the errors a call raises."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rest_framework.exceptions import ValidationError

from annotation.errors import flatten_errors
from annotation.models import Item
from tests.factories import ItemFactory, StudyFactory


def kind_item(
    kind: str,
    payload: dict,
    *,
    config: dict | None = None,
    gold: dict | None = None,
    external_id: str = "i1",
    attention: bool = False,
) -> Item:
    """An unsaved item of an unsaved ``kind`` study whose config the kind validated."""
    study = StudyFactory.build(kind=kind, config=config or {})
    return ItemFactory.build(
        study=study, external_id=external_id, payload=payload, gold=gold, attention_check=attention
    )


def errors_of(call: Callable[[], object]) -> dict[str, list[str]]:
    """The field errors ``call`` raises, flattened to ``{"choices.fluency": [...]}``."""
    with pytest.raises(ValidationError) as exc:
        call()
    return flatten_errors(exc.value.detail)


def error_detail(call: Callable[[], object]) -> dict:
    """The errors ``call`` raises as DRF gives them, keyed by top-level field."""
    with pytest.raises(ValidationError) as exc:
        call()
    return exc.value.detail
