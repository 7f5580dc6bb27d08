"""Amounts and whole numbers typed by a person (``annotation.platforms.money``): the one
reader of the platforms page, the commands and the bonus file (code review 3, C4)."""

from __future__ import annotations

import pytest

from annotation.errors import InputError
from annotation.numbers import whole_number_within
from annotation.platforms.money import as_currency, cents_from_text


@pytest.mark.parametrize(
    ("text", "cents"), [("1.50", 150), ("2", 200), (" 0.05 ", 5), (".5", 50), ("500.00", 50000)]
)
def test_amounts_are_read_as_cents(text, cents):
    assert cents_from_text(text, field="reward", high=50000) == cents


@pytest.mark.parametrize(
    "text",
    [
        "1e30",
        "1E2",
        "nan",
        "NaN",
        "inf",
        "-1",
        "+1",
        "1.505",
        "1,50",
        "",
        "²",
        "١",
        "1_000",
        "9" * 5000,
        "500.01",
    ],
)
def test_anything_else_is_refused_naming_the_field(text):
    with pytest.raises(InputError) as refused:
        cents_from_text(text, field="reward", high=50000)
    assert list(refused.value.errors) == ["reward"]


def test_zero_only_where_allowed():
    assert cents_from_text("0", field="bonus_cap", high=100, zero_ok=True) == 0
    with pytest.raises(InputError, match="more than 0"):
        cents_from_text("0.00", field="reward", high=100)


@pytest.mark.parametrize(("text", "number"), [("1", 1), (" 42 ", 42), ("100000", 100000)])
def test_whole_numbers_in_range(text, number):
    assert whole_number_within(text, field="places", low=1, high=100000) == number


@pytest.mark.parametrize("text", ["0", "100001", "²", "٣", "1.0", "1e3", "", "9" * 5000, "-5", "0x10"])
def test_whole_numbers_out_of_range_or_not_digits_are_refused(text):
    with pytest.raises(InputError) as refused:
        whole_number_within(text, field="places", low=1, high=100000)
    assert list(refused.value.errors) == ["places"]


def test_currency_has_two_decimals_without_float():
    assert (
        as_currency(150) == "1.50"
        and as_currency(5) == "0.05"
        and as_currency(2**60) == "11529215046068469.76"
    )
