"""What a round's page shows of its passage and controls, from the round's state alone."""

from __future__ import annotations

from django.utils.translation import gettext, gettext_noop

# The cues a player may tick; their texts are marked for translation and translated when
# a page shows them (the values are what answers and exports hold).
REASON_CATEGORIES = [
    ("grammar", gettext_noop("Grammar or spelling")),
    ("repetition", gettext_noop("Repeats itself")),
    ("irrelevant", gettext_noop("Off topic")),
    ("contradicts_previous", gettext_noop("Contradicts an earlier sentence")),
    ("contradicts_knowledge", gettext_noop("Contradicts what I know")),
    ("common_sense", gettext_noop("Makes no common sense")),
    ("coreference", gettext_noop("Mixes up who is who")),
    ("generic", gettext_noop("Vague, generic wording")),
]


def round_controls(item, state: dict) -> dict:
    """What the round's controls show for ``state``: all a reveal or a guess fragment
    needs, computed from the locked row the step just wrote (no further reads)."""
    sentences = item.payload["sentences"]
    count = len(sentences)
    revealed = min(max(int(state.get("revealed", 1)), 1), count)
    guess = state.get("guess")
    return {
        "shown_sentences": list(enumerate(sentences[:revealed])),
        "revealed": revealed,
        "sentence_count": count,
        "remaining": count - revealed,
        "category": item.payload["category"],
        "pending_guess": guess,
        "pending_all_human": guess == count,
        "can_reveal": guess is None and revealed < count,
        "can_mark": guess is None and revealed >= 2,
        "can_say_all_human": guess is None and revealed == count,
        "reason_categories": [(value, gettext(text)) for value, text in REASON_CATEGORIES],
    }
