"""Files a researcher uploaded on a form, kept on the server between the form's rounds.

The builder reads an items file on one post (to show its columns) and uses it on a later
one (to save). The file used to travel back in the page, in a hidden field: a file above
``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2.5 MB of form text) could then be read but never saved,
though the upload itself takes ``API_MAX_UPLOAD_BYTES``. Kept here under a random token
instead, the file is sent once, the page stays small, and one limit applies. A token is
only good for the researcher who uploaded the file; files are removed after
``KEEP_HOURS``.
"""

from __future__ import annotations

import re
import secrets
import time
from pathlib import Path

from django.conf import settings

KEEP_HOURS = 24
TOKEN = re.compile(r"[0-9a-f]{32}")


def keep_file(user, content: bytes) -> str:
    """Keep ``content`` for ``user``; the token that finds it again."""
    _remove_old()
    token = secrets.token_hex(16)
    path = _path(user, token)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part")
    partial.write_bytes(content)
    partial.replace(path)  # whole or absent: a reader never sees half a file
    return token


def kept_file(user, token: str) -> bytes | None:
    """The file ``user`` kept under ``token``; None when there is none (a token of
    another researcher, a made-up one, or one older than ``KEEP_HOURS``)."""
    if not TOKEN.fullmatch(token):
        return None
    try:
        return _path(user, token).read_bytes()
    except FileNotFoundError:
        return None


def _path(user, token: str) -> Path:
    return _folder() / str(int(user.pk)) / token


def _folder() -> Path:
    """Beside the uploads that wait for their job, in the folder the web instances share."""
    return Path(settings.UPLOAD_DIR) / "kept"


def _remove_old() -> None:
    """Files past ``KEEP_HOURS`` (cheap: one directory per researcher who uploaded lately)."""
    oldest = time.time() - KEEP_HOURS * 3600
    for path in _folder().glob("*/*"):
        try:
            if path.stat().st_mtime < oldest:
                path.unlink()
        except FileNotFoundError:  # removed by another request meanwhile
            continue
