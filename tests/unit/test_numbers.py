"""annotation.numbers.whole_number: the one parser of whole numbers typed into forms."""

import pytest

from annotation.numbers import whole_number


@pytest.mark.parametrize(
    ("raw", "number"),
    [("7", 7), (" 7 ", 7), ("-3", -3), ("+4", 4), ("0", 0), ("9" * 18, 10**18 - 1), (12, 12)],
)
def test_whole_numbers_are_read(raw, number):
    assert whole_number(raw) == number


@pytest.mark.parametrize(
    "raw",
    [
        "9" * 19,
        "9" * 5000,
        "²",
        "٣",
        "１",
        "1e30",
        "1.5",
        "NaN",
        "inf",
        "",
        " ",
        "-",
        "1 2",
        "\x00",
        True,
        None,
        1.0,
        [],
    ],
)
def test_anything_else_is_none_never_an_exception(raw):
    assert whole_number(raw) is None
