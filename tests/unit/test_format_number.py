"""Dashboard figures: a float a rounding error away from a whole number reads as that number."""

from scoring.selectors import format_number


def test_a_near_whole_float_reads_as_the_whole_number():
    assert format_number(1.9999999999996) == "2"
    assert format_number(-1e-17) == "0"
    assert format_number(1e-17) == "0"


def test_other_figures_keep_three_decimals_and_p_values_their_floor():
    assert format_number(0.6667) == "0.667"
    assert format_number(2.0004) == "2.000"
    assert format_number(1.0, "p_value") == "1.000"
    assert format_number(0.0001, "p_value") == "< 0.001"
