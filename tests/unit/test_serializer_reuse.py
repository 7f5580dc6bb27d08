"""A bulk load checks every item with one serializer instance per kind of value
(``reused_serializers``): the verdicts must be exactly those of a fresh instance per item,
the errors of one item never carried into the next, whatever order they come in."""

from __future__ import annotations

import pytest

from annotation.errors import InputError
from annotation.kinds import get_kind
from annotation.serializer_reuse import reused_serializers
from annotation.services.authoring.validation import check_item

CONFIG = {"questions": [{"id": "fluency", "type": "scale", "points": 5, "text": "How fluent is it?"}]}
KIND = get_kind("questionnaire")


def passage(**fields) -> dict:
    return {"id": "a", "text": "A passage.", "system": "sys1", **fields}


ITEMS = [
    {"external_id": "ok1", "payload": {"context": "Rate.", "passages": [passage()]}},
    {"external_id": "blank", "payload": {"passages": [passage(text="")]}},
    {"external_id": "ok2", "payload": {"passages": [passage(text="Another.")]}, "provenance": {"seed": 3}},
    {"external_id": "typo", "payload": {"passages": [passage(sistem="x")]}},
    {"external_id": "", "payload": {"passages": []}, "attention_check": "maybe"},
    {"external_id": "not-an-object", "payload": "text"},
    {"external_id": "ok3", "payload": {"passages": [passage(id="b")]}, "explanation": "Why."},
    "not an item",
]


def verdicts(items: list) -> list:
    """Each item's checked form, or its errors."""
    out = []
    for raw in items:
        try:
            out.append(("ok", check_item(KIND, CONFIG, raw)))
        except InputError as exc:
            out.append(("errors", exc.errors))
    return out


@pytest.mark.parametrize("order", [ITEMS, ITEMS[::-1], ITEMS * 2])
def test_reused_instances_give_every_item_the_verdict_a_fresh_one_gives(order):
    fresh = verdicts(order)
    with reused_serializers():
        reused = verdicts(order)
    assert reused == fresh
    assert {kind for kind, _ in fresh} == {"ok", "errors"}
