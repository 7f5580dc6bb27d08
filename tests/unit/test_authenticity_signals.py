"""Authenticity signals (docs/authenticity.md): the browser's summary is bounded and checked
on the server (clamped counts, the text's length measured from the post, anything malformed
recorded as missing), and the rule names its strong signs at the thresholds given."""

import json

import pytest

from annotation.services.participation.authenticity import (
    MAX_COUNT,
    MAX_MS,
    MISSING,
    Thresholds,
    read_signals,
    strong_signs,
)

RULE = Thresholds(min_chars=20, paste_share=0.5, keystroke_ratio=0.5, hidden_seconds=5)
TEXT = "The second reply keeps to the question and says why."  # 52 characters


def summary(fields=None, **page) -> str:
    counts = {"keys": 60, "typed": 52, "pastes": 0, "pasted": 0, "pasted_after_hidden": 0}
    return json.dumps(
        {
            "v": 1,
            "fields": fields if fields is not None else {"q-why": counts},
            "hidden_ms": 0,
            "hidden_count": 0,
            "first_input_ms": 2500,
            **page,
        }
    )


def field(**counts) -> dict:
    return {"keys": 0, "typed": 0, "pastes": 0, "pasted": 0, "pasted_after_hidden": 0, **counts}


def test_the_server_measures_the_text_and_clamps_the_counts():
    sent = summary(
        {
            "q-why": field(keys=10**12, typed=-5, pastes=1, pasted=3, pasted_after_hidden=400),
            "not-posted": field(keys=1),
        },
        hidden_ms=10**15,
        first_input_ms=1200.0,
    )
    signals = read_signals(sent, {"q-why": TEXT, "csrfmiddlewaretoken": "x"})
    assert signals == {
        "v": 1,
        "fields": {
            "q-why": {
                "chars": len(TEXT),
                "keys": MAX_COUNT,
                "typed": 0,
                "pastes": 1,
                "pasted": 3,
                "pasted_after_hidden": 3,  # never more than was pasted
            }
        },
        "hidden_ms": MAX_MS,
        "hidden_count": 0,
        "first_input_ms": 1200,
    }


@pytest.mark.parametrize(
    "sent",
    [
        None,
        "",
        "not json",
        "[1, 2]",
        json.dumps({"v": 2, "fields": {}}),
        json.dumps({"v": 1, "fields": []}),
        summary({"q-why": field(keys="60")}),
        summary({"q-why": field(keys=True)}),
        summary({"q-why": field(keys=1.5)}),
        summary(hidden_ms=None),
        summary(first_input_ms="soon"),
        summary({f"f{n}": field() for n in range(51)}),
        " " * 16_001,
    ],
)
def test_anything_malformed_is_recorded_as_missing(sent):
    assert read_signals(sent, {"q-why": TEXT}) == MISSING


def test_typed_text_has_no_strong_sign():
    signals = read_signals(summary(), {"q-why": TEXT})
    assert strong_signs(signals, RULE) == []


def test_pasted_text_is_a_strong_sign_and_text_without_keystrokes_another():
    pasted = read_signals(summary({"q-why": field(keys=2, pastes=1, pasted=52)}), {"q-why": TEXT})
    assert strong_signs(pasted, RULE) == ["pasted", "untyped"]
    inserted = read_signals(summary({"q-why": field(keys=0, typed=52)}), {"q-why": TEXT})
    assert strong_signs(inserted, RULE) == ["untyped"]


def test_the_thresholds_decide():
    half = read_signals(summary({"q-why": field(keys=30, typed=26, pastes=1, pasted=26)}), {"q-why": TEXT})
    assert strong_signs(half, RULE) == ["pasted"]  # 26 of 52: exactly the share
    assert strong_signs(half, Thresholds(paste_share=0.6)) == []
    short = read_signals(summary({"q-why": field(pastes=1, pasted=19)}), {"q-why": "x" * 19})
    assert strong_signs(short, RULE) == []  # under min_chars: too short to say


def test_a_paste_after_leaving_the_page_is_a_sign_when_the_page_was_hidden_long_enough():
    counts = field(keys=52, typed=30, pastes=1, pasted=22, pasted_after_hidden=22)
    away = read_signals(summary({"q-why": counts}, hidden_ms=8000, hidden_count=1), {"q-why": TEXT})
    assert strong_signs(away, RULE) == ["hidden_paste"]
    glance = read_signals(summary({"q-why": counts}, hidden_ms=1000, hidden_count=1), {"q-why": TEXT})
    assert strong_signs(glance, RULE) == []


def test_missing_signals_give_no_sign():
    assert strong_signs(dict(MISSING), RULE) == []
