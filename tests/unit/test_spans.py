"""Error spans: the question's definition and answer checks (kinds/spans.py), and the span
statistics (stats/spans.py) against independent computations: F1 over explicit character
sets, and alpha from the ``krippendorff`` package over a coders × characters table."""

from __future__ import annotations

import random
from collections import Counter

import krippendorff
import numpy as np
import pytest

from annotation.kinds.invalid import Invalid
from annotation.kinds.questions import check_question
from annotation.kinds.spans import check_value, from_form, tokens
from stats.spans import NONE, char_alpha, char_f1, error_counts, pairwise_f1, penalty

TEXT = "The cat sat on teh mat. Ünïcode 🙂 works."


def question(**settings) -> dict:
    raw = {"id": "err", "type": "spans", "text": "Mark errors", "categories": ["accuracy", "fluency"]}
    return check_question({**raw, **settings}, [])


def span(start, end, category="fluency", severity="minor") -> dict:
    return {"start": start, "end": end, "category": category, "severity": severity}


def test_definition_defaults_and_weights():
    q = question()
    assert (q["severities"], q["weights"], q["overlap"], q["score"], q["passage"]) == (
        ["minor", "major"],
        [1, 5],
        False,
        False,
        1,
    )
    assert question(severities=["minor", "major", "critical"])["weights"] == [1, 5, 25]
    assert question(severities=["small", "big"], weights=["0.5", 3])["weights"] == [0.5, 3]
    for bad, field in [
        ({"categories": []}, "categories"),
        ({"categories": ["a", "a"]}, "categories"),
        ({"severities": ["small"]}, "weights"),  # no standard weight, none given
        ({"weights": [1]}, "weights"),
        ({"weights": [1, -2]}, "weights"),
        ({"overlap": "yes"}, "overlap"),
        ({"colour": "red"}, "colour"),
    ]:
        with pytest.raises(Invalid, match=f"^{field}:"):
            question(**bad)


def test_answers_are_checked_and_sorted():
    q = question(score=True)
    value = check_value(q, {"spans": [span(15, 18), span(0, 3, "accuracy", "major")], "score": "80"}, TEXT)
    assert value == {"spans": [span(0, 3, "accuracy", "major"), span(15, 18)], "score": 80}
    assert check_value(q, {"spans": [], "score": 100}, TEXT) == {"spans": [], "score": 100}
    bad_answers = {
        "inside": {"spans": [span(30, 99)], "score": 1},
        "empty": {"spans": [span(5, 5)], "score": 1},
        "spaces": {"spans": [span(3, 4)], "score": 1},
        "category": {"spans": [span(0, 3, "style")], "score": 1},
        "severity": {"spans": [span(0, 3, severity="critical")], "score": 1},
        "overlap": {"spans": [span(0, 7), span(4, 10)], "score": 1},
        "twice": {"spans": [span(0, 3), span(0, 3)], "score": 1},
        "score": {"spans": []},
        "score range": {"spans": [], "score": 101},
        "keys": {"spans": [{"start": 0, "end": 3, "category": "fluency"}], "score": 1},
        "shape": [span(0, 3)],
    }
    for name, raw in bad_answers.items():
        with pytest.raises(Invalid):
            check_value(q, raw, TEXT)
            pytest.fail(name)
    # overlaps where the study allows them; a score where none is asked is refused
    assert len(check_value(question(overlap=True), {"spans": [span(0, 7), span(4, 10)]}, TEXT)["spans"]) == 2
    with pytest.raises(Invalid, match="no overall score"):
        check_value(question(), {"spans": [], "score": 5}, TEXT)


def test_offsets_are_python_characters_and_tokens_carry_them():
    """An emoji is one character of the text as stored (the browser's UTF-16 would count two):
    the page's tokens carry the server's offsets, so a span after it is where it should be."""
    parts = tokens(TEXT, {"spans": [span(24, 31)]})
    assert "".join(t["text"] for t in parts) == TEXT
    assert all(TEXT[t["start"] : t["end"]] == t["text"] for t in parts)
    works = next(t for t in parts if t["text"] == "works")
    assert (works["start"], works["end"]) == (34, 39)
    assert [t["text"] for t in parts if t["marked"]] == ["Ünïcode"]


def test_the_form_fields_become_a_value():
    assert from_form('[{"start": 1}]', " 7 ") == {"spans": [{"start": 1}], "score": 7}
    assert from_form("[]", "") == {"spans": []}
    assert from_form("not json", None) == "not json"
    assert from_form(None, None) is None


def _char_sets_f1(a, b):
    """Independent: explicit per-character membership lists."""
    length = max([s["end"] for s in a + b] + [1])
    first = [any(s["start"] <= i < s["end"] for s in a) for i in range(length)]
    second = [any(s["start"] <= i < s["end"] for s in b) for i in range(length)]
    both = sum(x and y for x, y in zip(first, second, strict=True))
    return None if not (sum(first) + sum(second)) else 2 * both / (sum(first) + sum(second))


def _random_spans(rng, length, categories, overlap=False):
    spans, taken = [], set()
    for _ in range(rng.randint(0, 4)):
        start = rng.randrange(length - 1)
        end = rng.randint(start + 1, min(length, start + 12))
        if not overlap and taken & set(range(start, end)):
            continue
        taken |= set(range(start, end))
        spans.append(span(start, end, rng.choice(categories), rng.choice(["minor", "major"])))
    return spans


def test_f1_against_per_character_sets():
    rng = random.Random(7)
    for _ in range(200):
        a, b = _random_spans(rng, 40, ["x"]), _random_spans(rng, 40, ["x"])
        expected = _char_sets_f1(a, b)
        got = char_f1(a, b)
        assert got == pytest.approx(expected) if expected is not None else got is None
    assert char_f1([span(0, 4)], [span(2, 6)]) == pytest.approx(0.5)
    assert char_f1([span(0, 4, "accuracy")], [span(0, 4)], by_category=True) == 0.0
    scores, owners = pairwise_f1(["i1", "i1", "i1", "i2", "i2"], [[span(0, 4)], [span(2, 6)], [], [], []])
    # i1: (a,b) 0.5, (a,∅) 0, (b,∅) 0; i2: nothing marked by either: left out
    assert sorted(scores.tolist()) == [0.0, 0.0, 0.5] and owners.tolist() == [0, 0, 0]


def _alpha_by_library(passages):
    """Independent: a coders × characters table of category codes, the ``krippendorff``
    package's nominal alpha (passages side by side, missing where a coder did not annotate)."""
    coders = max(len(answers) for _, answers in passages)
    columns = []
    codes = {NONE: 0}
    for length, answers in passages:
        if len(answers) < 2:
            continue
        for position in range(length):
            column = [np.nan] * coders
            for c, spans in enumerate(answers):
                covering = sorted(
                    (s for s in spans if s["start"] <= position < s["end"]),
                    key=lambda s: (s["start"], s["end"], s["category"]),
                )
                value = covering[0]["category"] if covering else NONE
                column[c] = codes.setdefault(value, len(codes))
            columns.append(column)
    return krippendorff.alpha(np.array(columns).T, level_of_measurement="nominal")


@pytest.mark.parametrize("overlap", [False, True])
def test_char_alpha_matches_the_krippendorff_package(overlap):
    rng = random.Random(11 + overlap)
    passages = []
    for _ in range(12):
        length = rng.randint(10, 60)
        truth = _random_spans(rng, length, ["acc", "flu"], overlap)
        answers = []
        for _ in range(rng.randint(1, 4)):
            own = [s for s in truth if rng.random() < 0.7] + _random_spans(rng, length, ["acc", "flu"], True)
            answers.append(own if overlap else [s for s in own if s in truth] or own[:1])
        passages.append((length, answers))
    got = char_alpha(passages)
    assert got.value == pytest.approx(_alpha_by_library(passages), abs=1e-9)
    assert got.details["passages"] == sum(len(a) >= 2 for _, a in passages)


def test_char_alpha_edges():
    assert char_alpha([(10, [[span(0, 3)]])]).reason.startswith("fewer than two")
    assert char_alpha([(10, [[span(0, 3)], [span(0, 3)]])]).value == pytest.approx(1.0)
    assert not char_alpha([(10, [[], []])]).defined  # one value throughout


def test_penalties_and_counts():
    weights = {"minor": 1.0, "major": 5.0}
    answers = [[span(0, 3), span(4, 7, "accuracy", "major")], [], [span(1, 2)]]
    assert [penalty(a, weights) for a in answers] == [6.0, 0.0, 1.0]
    assert error_counts(answers) == {("fluency", "minor"): 2, ("accuracy", "major"): 1}


def test_a_models_json_reply_becomes_offsets_or_is_handed_on_to_be_refused():
    from annotation.kinds.base import ModelQuestion
    from annotation.kinds.spans import from_model_output
    from workers.raters.endpoint import winner
    from workers.raters.prompts import reply_answer

    text = "the cat and the cat"
    reply = 'Sure. {"spans": [{"text": "cat", "category": "fluency", "severity": "minor", "occurrence": 2}, '
    reply += '{"start": 0, "end": 3, "category": "accuracy", "severity": "major"}], "score": 40} done'
    value = from_model_output(reply, text)
    assert check_value(question(score=True), value, text) == {
        "spans": [span(0, 3, "accuracy", "major"), span(16, 19)],
        "score": 40,
    }
    missing = from_model_output(
        '{"spans": [{"text": "dog", "category": "fluency", "severity": "minor"}]}', text
    )
    with pytest.raises(Invalid, match="'dog' is not in the passage"):
        check_value(question(), missing, text)
    for garbage in ("no errors", '{"errors": []}', "{not json"):
        with pytest.raises(Invalid, match="expected"):
            check_value(question(), from_model_output(garbage, text), text)
    open_question = ModelQuestion("err", "err", "Mark them.", ())
    assert reply_answer("  {} \n", open_question).value == "{}" and reply_answer(" ", open_question) is None
    assert winner(open_question, Counter({"b": 1, "a": 2, "c": 2})) == "a"
