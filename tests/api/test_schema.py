"""The OpenAPI document covers every endpoint, and its docs pages work without the internet."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.validation import validate_schema

from .openapi import openapi

pytestmark = pytest.mark.django_db


def api_routes(patterns=None, prefix: str = "") -> list[tuple[str, type]]:
    """(OpenAPI-style path, view class) for every URL under /api/v1/."""
    found = []
    for entry in patterns if patterns is not None else get_resolver().url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            found += api_routes(entry.url_patterns, route)
        elif isinstance(entry, URLPattern) and route.startswith("api/v1/"):
            found.append(("/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route), entry.callback.view_class))
    return found


def test_the_schema_is_valid_openapi():
    validate_schema(openapi())


def test_every_endpoint_and_method_is_documented_with_a_summary_and_success_answer():
    paths = openapi()["paths"]
    routes = api_routes()
    assert len(routes) >= 17
    for path, view in routes:
        assert path in paths, f"{path} is missing from the schema"
        for method in ("get", "post", "patch", "put", "delete"):
            if hasattr(view, method):
                operation = paths[path].get(method)
                assert operation, f"{method.upper()} {path} is not documented"
                assert operation.get("summary"), f"{method.upper()} {path} has no summary"
                assert any(code.startswith("2") for code in operation["responses"]), path


def test_writes_document_the_idempotency_key():
    for path, methods in openapi()["paths"].items():
        for method in ("post", "patch"):
            if method in methods and not path.endswith("/auth/token/"):
                names = [p["name"] for p in methods[method].get("parameters", [])]
                assert "Idempotency-Key" in names, f"{method} {path}"


def test_schema_and_docs_pages_are_served_from_our_own_static_files(client):
    assert client.get("/api/schema/").status_code == 200
    for page in ("/api/docs/", "/api/redoc/"):
        html = client.get(page).content.decode()
        scripts = re.findall(r"""src=["']([^"']+)["']""", html)
        assert scripts, page
        # our own static files, or the docs page's own script (served apart: no inline script)
        assert all(src.startswith(("/static/", f"{page}?script")) for src in scripts), scripts
        assert not re.search(r"https?://[^\"']*cdn", html, re.IGNORECASE)
