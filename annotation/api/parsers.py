"""Request bodies read with a size bound (API_MAX_UPLOAD_BYTES): never more than that in memory."""

from __future__ import annotations

import codecs
import hashlib
import tempfile
from collections.abc import Iterator

from django.conf import settings
from rest_framework.parsers import BaseParser
from rest_framework.renderers import JSONRenderer

from annotation.errors import InputError
from annotation.services.web.json_input import parse_json

from .errors import PayloadTooLarge

CHUNK = 64 * 1024
SPOOL_IN_MEMORY = 1024 * 1024


def declared_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def read_bounded(stream, length: int) -> bytes:
    """The whole body, never more than API_MAX_UPLOAD_BYTES of it (413 beyond)."""
    limit = settings.API_MAX_UPLOAD_BYTES
    if length > limit:
        raise PayloadTooLarge()
    body = stream.read(limit + 1) if stream is not None else b""
    if len(body) > limit:
        raise PayloadTooLarge()
    return body


def spool_body(request) -> str:
    """Read a DRF request's body once, into a file the parsers then read; its SHA-256.

    Used for the ``Idempotency-Key`` fingerprint, which must cover the whole body however
    large; the file stays in memory up to 1 MiB and goes to disk beyond, so a 50 MiB
    upload is never held whole in memory, and the items upload still reads it line by line.
    """
    limit = settings.API_MAX_UPLOAD_BYTES
    if declared_length(request) > limit:
        raise PayloadTooLarge()
    # Not a ``with``: the parser reads the file after this returns; it is closed when the
    # request is dropped.
    spooled = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115
    digest, read = hashlib.sha256(), 0
    source = request.stream  # DRF's view of the body (None when it is empty)
    while source is not None and (chunk := source.read(CHUNK)):
        read += len(chunk)
        if read > limit:
            raise PayloadTooLarge()
        digest.update(chunk)
        spooled.write(chunk)
    spooled.seek(0)
    request._stream = spooled if read else None  # DRF parses from ``_stream`` (see Request.stream)
    return digest.hexdigest()


def bounded_lines(stream, length: int) -> Iterator[bytes]:
    """The body's lines, read from the stream in chunks; 413 once the bound is passed."""
    limit = settings.API_MAX_UPLOAD_BYTES
    if length > limit:
        raise PayloadTooLarge()
    if stream is None:
        return
    read, pending = 0, b""
    while chunk := stream.read(CHUNK):
        read += len(chunk)
        if read > limit:
            raise PayloadTooLarge()
        pending += chunk
        *lines, pending = pending.split(b"\n")
        yield from lines
    if pending:
        yield pending


class BoundedJSONParser(BaseParser):
    """JSON bodies up to API_MAX_UPLOAD_BYTES; larger ones get a JSON 413.

    Deliberately not a ``JSONParser``: DRF reads ``request.body`` for those before they
    parse, and Django refuses a body over DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB) there with
    an HTML 400. This parser reads the stream itself, so the documented bound is the one
    that holds. Bad JSON, and JSON nested too deeply, is a 400 naming ``body`` (or the
    place inside it).
    """

    media_type = "application/json"
    renderer_class = JSONRenderer

    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        body = read_bounded(stream, declared_length(request) if request is not None else 0)
        if not body:
            return {}
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.decode(body, encoding)
        except (UnicodeDecodeError, LookupError):
            raise InputError({"body": [f"Not valid JSON: the text is not {encoding}."]}) from None
        return parse_json(text, field="body")


class JSONLinesParser(BaseParser):
    """JSON Lines: ``request.data`` is a lazy iterator of lines, read as they are consumed."""

    media_type = "application/x-ndjson"

    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        return bounded_lines(stream, declared_length(request) if request is not None else 0)


class JSONLParser(JSONLinesParser):
    media_type = "application/jsonl"
