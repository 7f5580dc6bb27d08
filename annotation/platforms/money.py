"""Money amounts typed by a person, read once for every way in.

The platforms page, the ``prolific``/``mturk`` commands and the bonus file all read an amount
such as ``1.50`` here (``cents_from_text``) and print one with ``as_currency``; every form
field or command option that takes a whole number reads it with
``annotation.numbers.whole_number_within``. Each
refuses, with an ``InputError`` naming the field, what ``int()``/``Decimal()`` would crash on
or silently accept: superscript and other non-ASCII digits (``str.isdigit`` says yes to
``²``), ``nan``, ``inf``, exponents (``1e30``), more than two decimals, thousands of digits,
and any value above the field's bound. The bounds of a publish (reward, places, minutes)
and of the bonus cap live here too, so the page's help text, the job's parameters and the
docs (docs/crowd.md) say the same numbers.
"""

from __future__ import annotations

import re
from decimal import Decimal

from annotation.errors import InputError

# A publish asks a platform to pay this much per participant at most: a few hours of work
# at a generous rate; more is a typo (cents for units, a digit too many).
MAX_REWARD_CENTS = 500_00
# Participants asked for by one publish: far above any study here (the largest plans a few
# thousand), far below what a typo such as 1e30 would ask Prolific to charge for.
MAX_PLACES = 100_000
# The estimate of one participant's time: a day (Prolific and MTurk take minutes as an int).
MAX_MINUTES = 24 * 60
# The most one participant may get in bonuses in a study (the cap itself is the researcher's).
MAX_BONUS_CAP_CENTS = 1_000_00
# A single bonus line: no more than the largest cap could allow.
MAX_BONUS_CENTS = MAX_BONUS_CAP_CENTS

# ASCII digits only: ``\d`` and ``str.isdigit`` accept other scripts' digits and superscripts.
_AMOUNT = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,2})?|\.[0-9]{1,2}")


def cents_from_text(text: str, *, field: str, high: int, zero_ok: bool = False) -> int:
    """An amount in the currency's unit (``1.50``: digits, at most two decimals, no sign,
    no exponent) as cents, above 0 (or 0 if ``zero_ok``) and at most ``high`` cents."""
    value = text.strip()
    if not _AMOUNT.fullmatch(value):
        raise InputError(
            {field: [f"An amount such as 1.50: digits, at most two decimals, at most {as_currency(high)}."]}
        )
    cents = int(Decimal(value) * 100)
    if cents == 0 and not zero_ok:
        raise InputError({field: ["Must be more than 0."]})
    if cents > high:
        raise InputError({field: [f"{value} is more than the most allowed here, {as_currency(high)}."]})
    return cents


def as_currency(cents: int) -> str:
    """Cents as an amount in the currency's unit with two decimals (``150`` → ``1.50``)."""
    return str((Decimal(cents) / 100).quantize(Decimal("0.01")))
