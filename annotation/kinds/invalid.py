"""The one error of a question's definition or answer, shared by ``questions`` and the
modules of single question types (``spans``) that ``questions`` dispatches to."""

from __future__ import annotations


class Invalid(ValueError):
    """One question's definition or answer is wrong; the message says how."""
