"""Request bodies read with a size bound (API_MAX_UPLOAD_BYTES): never more than that in memory."""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser, JSONParser

from .errors import PayloadTooLarge

CHUNK = 64 * 1024


def declared_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


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


class BoundedJSONParser(JSONParser):
    """JSON bodies up to API_MAX_UPLOAD_BYTES; larger ones get 413, not an unbounded read."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_MAX_UPLOAD_BYTES
        request = (parser_context or {}).get("request")
        if request is not None and declared_length(request) > limit:
            raise PayloadTooLarge()
        body = stream.read(limit + 1) if stream is not None else b""
        if len(body) > limit:
            raise PayloadTooLarge()
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return json.loads(codecs.decode(body, encoding)) if body else {}
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None


class JSONLinesParser(BaseParser):
    """JSON Lines: ``request.data`` is a lazy iterator of lines, read as they are consumed."""

    media_type = "application/x-ndjson"

    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        return bounded_lines(stream, declared_length(request) if request is not None else 0)


class JSONLParser(JSONLinesParser):
    media_type = "application/jsonl"
