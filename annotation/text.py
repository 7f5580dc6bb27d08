"""Plain-text helpers shared by the kinds and the workers (no model code here)."""

from __future__ import annotations

from functools import cache, lru_cache

import pysbd


@cache
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Rule-based English sentence splitting (offline; nothing is downloaded)."""
    return list(_split(text))


@lru_cache(maxsize=4096)
def _split(text: str) -> tuple[str, ...]:
    """The sentences of one text, remembered: pysbd's regexes cost milliseconds a passage, and
    the same passages are split again and again (checked when loaded, then in the reports;
    the demo game regenerates every passage to find it has nothing new)."""
    return tuple(s.strip() for s in _segmenter().segment(text) if s.strip())
