"""A researcher's own platform token, encrypted at rest (Fernet), and the other secrets a
platform gives us (a Prolific workspace's webhook secret), sealed the same way (``seal``).

The key comes from ``PLATFORM_TOKEN_KEY`` or, when that is empty, from ``SECRET_KEY``
(a SHA-256 of it, so a new secret key makes stored tokens unreadable: the researcher stores
theirs again). A stored token is read back only to make a call: no page, export or API
answer ever shows it.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

from annotation.errors import InputError
from annotation.models import ResearcherToken


def _fernet() -> Fernet:
    secret = settings.PLATFORM_TOKEN_KEY or settings.SECRET_KEY
    key = hashlib.sha256(f"roft-platform-tokens:{secret}".encode()).digest()
    return Fernet(base64.urlsafe_b64encode(key))


def seal(secret: str) -> bytes:
    """``secret`` encrypted under the site's key, as stored."""
    return _fernet().encrypt(secret.encode())


def unseal(sealed: bytes | memoryview) -> str:
    """A stored secret read back, or "" (none stored, or unreadable under the current key)."""
    if not sealed:
        return ""
    try:
        return _fernet().decrypt(bytes(sealed)).decode()
    except InvalidToken:
        return ""


def store_token(user, *, platform: str, token: str) -> None:
    """Keep ``token`` for ``user`` on ``platform`` (replacing theirs); an empty token deletes it."""
    token = token.strip()
    if not token:
        ResearcherToken.objects.filter(user=user, platform=platform).delete()
        return
    if len(token) > 500 or any(ch.isspace() for ch in token):
        raise InputError({"token": ["A token is one word of at most 500 characters."]})
    encrypted = seal(token)
    ResearcherToken.objects.update_or_create(user=user, platform=platform, defaults={"encrypted": encrypted})


def has_token(user, *, platform: str) -> bool:
    return ResearcherToken.objects.filter(user=user, platform=platform).exists()


def researcher_token(user, *, platform: str) -> str:
    """The user's stored token, or "" (none, or unreadable under the current key)."""
    if user is None:
        return ""
    row = ResearcherToken.objects.filter(user=user, platform=platform).first()
    return unseal(row.encrypted) if row is not None else ""
