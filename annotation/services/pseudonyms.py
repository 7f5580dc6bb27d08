"""Participant pseudonyms for exports: stable inside one study, unlinkable across studies.

A pseudonym is an HMAC of the participant's identity (their crowd-platform id when they
have one) keyed by the study's own secret salt, which never leaves the server. The same
worker gets the same pseudonym in every export of a study, a different one in another
study, and nobody holding an export can recover the platform id from it.
"""

from __future__ import annotations

import hmac

PSEUDONYM_LENGTH = 16


def pseudonym(salt: str, *, source: str, platform_worker_id: str, public_id: str) -> str:
    """``p`` followed by 16 hex characters of HMAC-SHA256(salt, identity)."""
    identity = f"{source}:{platform_worker_id}" if platform_worker_id else f"id:{public_id}"
    digest = hmac.digest(salt.encode(), identity.encode(), "sha256").hex()  # one C call (exports: thousands)
    return "p" + digest[:PSEUDONYM_LENGTH]


def participant_pseudonym(study, participant) -> str:
    """A participant's pseudonym in a study: their one id on the participants page, in the
    API and in every export."""
    return pseudonym(
        study.pseudonym_salt,
        source=participant.source,
        platform_worker_id=participant.platform_worker_id,
        public_id=participant.public_id,
    )


class PseudonymCache:
    """Pseudonyms by participant row id, remembered up to a bound (constant memory)."""

    def __init__(self, salt: str, limit: int = 100_000):
        self.salt = salt
        self.limit = limit
        self._known: dict[int, str] = {}

    def get(self, participant_id: int, source: str, platform_worker_id: str, public_id: str) -> str:
        found = self._known.get(participant_id)
        if found is None:
            if len(self._known) >= self.limit:
                self._known.clear()
            found = pseudonym(
                self.salt, source=source, platform_worker_id=platform_worker_id, public_id=public_id
            )
            self._known[participant_id] = found
        return found
