"""A bulk load checks every item with one serializer instance per kind of value
(``reused_serializers``): the verdicts must be exactly those of a fresh instance per item,
the errors of one item never carried into the next, whatever order they come in."""

from __future__ import annotations

import pytest

from annotation import serializer_reuse
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


def verdicts(items: list, kind=KIND, config: dict = CONFIG) -> list:
    """Each item's checked form, or its errors."""
    out = []
    for raw in items:
        try:
            out.append(("ok", check_item(kind, config, raw)))
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


CLAIM = get_kind("claim")


def claim_item(external_id: str, sentences: int, evidence: list[int], **fields) -> dict:
    payload = {"claim": "X holds.", "sentences": [f"Sentence {n}." for n in range(sentences)]}
    return {
        "external_id": external_id,
        "payload": payload,
        "gold": {"label": "supports", "evidence": evidence},
        **fields,
    }


# Gold is checked against its own item (an evidence index past that item's sentences is an
# error), so each item's gold runs under a context of its own.
GOLD_ITEMS = [
    claim_item("three", 3, [2]),
    claim_item("two", 2, [2]),
    claim_item("check", 2, [1], attention_check=True),
    claim_item("repeat", 3, [1, 1]),
    claim_item("three-again", 3, [0, 2]),
]
GOLD_VERDICTS = {"three": "ok", "two": "errors", "check": "ok", "repeat": "errors", "three-again": "ok"}


@pytest.mark.parametrize("order", [GOLD_ITEMS, GOLD_ITEMS[::-1], GOLD_ITEMS * 2])
def test_each_items_gold_is_checked_against_that_item_with_one_instance_per_serializer(order):
    fresh = verdicts(order, CLAIM, {})
    with reused_serializers():
        reused = verdicts(order, CLAIM, {})
        kept = len(serializer_reuse._scope.instances)
    assert reused == fresh
    assert {raw["external_id"]: kind for raw, (kind, _) in zip(order, fresh, strict=True)} == GOLD_VERDICTS
    assert kept == 3  # the item's fields, the payload's and the gold's, however many items
