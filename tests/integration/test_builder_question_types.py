"""The builder's question blocks follow the one declaration of question types
(``kinds.questions.TYPE_KEYS`` and ``SETTING_INPUTS``): each type round-trips through the
form with every one of its settings, the page shows each type's fields and no other's, and a
setting given to a type in the declaration alone appears in the builder and is read back."""

from __future__ import annotations

import re

import pytest
from django.http import QueryDict

from annotation.kinds.questions import SETTING_INPUTS, TYPE_KEYS, TYPES, check_questions
from annotation.research.views.builder_form import QUESTION_FIELDS, question_values, questions_from_post

# Each type with every one of its settings away from its default, in an order a show_if can
# follow (the multi question is asked only for some answers of the choice question).
EXAMPLES = [
    {
        "id": "fluency",
        "type": "scale",
        "text": "How fluent?",
        "points": 7,
        "labels": ["Broken", "Flawless"],
        "per": "passage",
    },
    {"id": "topic", "type": "choice", "text": "Topic?", "options": ["news", "sport", "other"], "per": "item"},
    {
        "id": "flaws",
        "type": "multi",
        "text": "Which flaws?",
        "options": ["typos", "repeats"],
        "required": False,
        "show_if": {"question": "topic", "in": ["news", "other"]},
    },
    {"id": "better", "type": "pick", "text": "Which is better?", "pick": "pairwise", "tie": True},
    {"id": "marked", "type": "sentences", "text": "Mark the odd sentences.", "passage": 2},
    {"id": "why", "type": "text", "text": "Why?", "min_length": 5, "max_length": 300},
    {
        "id": "errors",
        "type": "spans",
        "text": "Mark the errors.",
        "passage": 2,
        "categories": ["accuracy", "fluency"],
        "severities": ["minor", "major", "blocker"],
        "weights": [1, 5, 12.5],
        "overlap": True,
        "score": True,
    },
]


def posted(blocks: list[dict]) -> QueryDict:
    """The question blocks as the page posts them: one list per field, in the page's order."""
    post = QueryDict(mutable=True)
    for name in QUESTION_FIELDS:
        post.setlist(f"q_{name}", [str(block[name]) for block in blocks])
    return post


def test_the_examples_cover_every_type_and_every_setting():
    """A type or a setting added to the declaration must be added here, so the round trip
    below checks it."""
    assert sorted(q["type"] for q in EXAMPLES) == sorted(TYPES)
    for question in EXAMPLES:
        assert TYPE_KEYS[question["type"]] <= set(question), question["type"]
    assert set(SETTING_INPUTS) == set().union(*TYPE_KEYS.values())


def test_every_type_round_trips_through_the_builders_form():
    definitions = check_questions(EXAMPLES)
    blocks = [question_values(q) for q in definitions]
    assert check_questions(questions_from_post(posted(blocks))) == definitions


def test_blank_settings_take_their_defaults_and_other_types_settings_are_not_read():
    """A block holds every field; only its own type's are read, and blank ones are left to
    the definition's defaults."""
    blocks = [
        {**question_values({"id": "q1", "type": "text", "text": "Why?"}), "min_length": "", "max_length": ""},
        {
            **question_values({"id": "q2", "type": "choice", "text": "Which?"}),
            "options": "a\nb",
            "points": "9",
        },
    ]
    assert questions_from_post(posted(blocks)) == [
        {"id": "q1", "type": "text", "text": "Why?"},
        {"id": "q2", "type": "choice", "text": "Which?", "options": ["a", "b"]},
    ]


def field_types(page: str) -> dict[str, set[str]]:
    """For each setting's field in the page's question blocks: the types that show it."""
    found: dict[str, set[str]] = {}
    for types, name in re.findall(r'<label data-for-types="([^"]*)"[^>]*>[^<]*<\w+ name="q_(\w+)"', page):
        found.setdefault(name, set()).update(types.split())
    return found


@pytest.mark.django_db
def test_the_builder_shows_each_types_settings_and_no_others(client, researcher):
    page = client.get("/research/builder/?template=questionnaire-blank").content.decode()
    assert field_types(page) == {
        name: {kind for kind in TYPES if name in TYPE_KEYS[kind]} for name in SETTING_INPUTS
    }


@pytest.mark.django_db
def test_a_setting_given_to_a_type_in_the_declaration_alone_appears_in_the_builder(
    client, researcher, monkeypatch
):
    """Say choice questions took labels too: the page shows the labels field for them, and
    the posted labels reach the definition, with no change to the builder."""
    monkeypatch.setitem(TYPE_KEYS, "choice", TYPE_KEYS["choice"] | {"labels"})
    page = client.get("/research/builder/?template=questionnaire-blank").content.decode()
    assert "choice" in field_types(page)["labels"]
    block = {**question_values({"id": "q1", "type": "choice", "options": ["a", "b"]}), "labels": "x\ny"}
    assert questions_from_post(posted([block]))[0]["labels"] == ["x", "y"]
