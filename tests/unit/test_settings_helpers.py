"""The typed environment helpers fail loudly on nonsense instead of guessing."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from roft_site import settings as s


def test_env_bool_accepts_the_usual_spellings(monkeypatch):
    for raw, expected in [("1", True), ("true", True), ("On", True), ("0", False), ("no", False)]:
        monkeypatch.setenv("X_FLAG", raw)
        assert s.env_bool("X_FLAG", not expected) is expected


def test_env_bool_rejects_nonsense(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG"):
        s.env_bool("X_FLAG", False)


def test_env_int_checks_type_and_bound(monkeypatch):
    monkeypatch.setenv("X_NUM", "abc")
    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        s.env_int("X_NUM", 1)
    monkeypatch.setenv("X_NUM", "0")
    with pytest.raises(ImproperlyConfigured, match="at least 1"):
        s.env_int("X_NUM", 5, minimum=1)
    monkeypatch.setenv("X_NUM", "7")
    assert s.env_int("X_NUM", 5, minimum=1) == 7


@pytest.mark.parametrize(
    ("raw", "error"), [("abc", "not a number"), ("nan", "not a finite"), ("-0.5", "at least 0")]
)
def test_env_float_checks_type_and_bound(monkeypatch, raw, error):
    monkeypatch.setenv("X_MARGIN", raw)
    with pytest.raises(ImproperlyConfigured, match=error):
        s.env_float("X_MARGIN", 0.1, minimum=0.0)


def test_env_float_reads_a_number_or_the_default(monkeypatch):
    monkeypatch.delenv("X_MARGIN", raising=False)
    assert s.env_float("X_MARGIN", 0.1) == 0.1
    monkeypatch.setenv("X_MARGIN", "0.25")
    assert s.env_float("X_MARGIN", 0.1, minimum=0.0) == 0.25


def test_env_list_and_json(monkeypatch):
    monkeypatch.setenv("X_LIST", "a, b,,c")
    assert s.env_list("X_LIST", []) == ["a", "b", "c"]
    monkeypatch.setenv("X_JSON", "{bad")
    with pytest.raises(ImproperlyConfigured, match="X_JSON"):
        s.env_json("X_JSON", {})


def test_required_variable(monkeypatch):
    monkeypatch.delenv("X_SECRET", raising=False)
    with pytest.raises(ImproperlyConfigured, match="X_SECRET"):
        s.env_required("X_SECRET")
