"""Plain-text helpers shared by the kinds and the workers (no model code here)."""

from __future__ import annotations

from functools import cache

import pysbd


@cache
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Rule-based English sentence splitting (offline; nothing is downloaded)."""
    return [s.strip() for s in _segmenter().segment(text) if s.strip()]
