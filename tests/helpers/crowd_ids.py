"""Crowd worker ids of the platforms' own forms, for study links in tests: the entry refuses
anything else (``annotation.services.participation.participants.parse_crowd_params``). A readable name
gives the same id every time, so a test can name its participants as before."""

from __future__ import annotations

import hashlib


def prolific_id(name: str) -> str:
    """A Prolific id (24 lowercase hexadecimal characters) standing for ``name``."""
    return hashlib.sha256(name.encode()).hexdigest()[:24]


def mturk_id(name: str) -> str:
    """An MTurk worker id ("A", then capitals and digits) standing for ``name``."""
    return "A" + hashlib.sha256(name.encode()).hexdigest()[:13].upper()
