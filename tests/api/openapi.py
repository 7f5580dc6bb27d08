"""Check API answers against our own OpenAPI document (as Zulip's tests do)."""

from __future__ import annotations

import re
from functools import cache

import jsonschema
from drf_spectacular.generators import SchemaGenerator


@cache
def openapi() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def _json_schema(node):
    """OpenAPI 3.0 → JSON Schema: ``nullable`` becomes a null alternative.

    ``oneOf`` is read as ``anyOf``: drf-spectacular documents a blank-allowed URL as
    "a URI or an empty string", and without format checks '' would match both.
    """
    if isinstance(node, list):
        return [_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    converted = {
        ("anyOf" if k == "oneOf" else k): _json_schema(v) for k, v in node.items() if k != "nullable"
    }
    if node.get("nullable"):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


@cache
def components() -> dict:
    """The document's components in JSON Schema, converted once."""
    return _json_schema(openapi()["components"])


# A documented schema's validator by the schema's id (the schemas live as long as the cached
# document), with the schema kept so the id stays its own.
_validators: dict[int, tuple[dict, jsonschema.protocols.Validator]] = {}


def check_body(schema: dict, body) -> None:
    """Fail unless ``body`` fits ``schema``, a schema of the document, as ``jsonschema.validate``
    fails (the best-matching error); the schema is checked and its validator built once."""
    if id(schema) not in _validators:
        document = {**_json_schema(schema), "components": components()}
        kind = jsonschema.validators.validator_for(document)
        kind.check_schema(document)
        _validators[id(schema)] = (schema, kind(document))
    error = jsonschema.exceptions.best_match(_validators[id(schema)][1].iter_errors(body))
    if error is not None:
        raise error


def operation(path: str, method: str) -> dict:
    """The documented operation for a concrete path such as /api/v1/studies/x/."""
    # Literal paths first: /participants/returned/ before /participants/{public_id}/.
    for template, methods in sorted(openapi()["paths"].items(), key=lambda pair: pair[0].count("{")):
        pattern = "^" + "[^/]+".join(re.escape(part) for part in re.split(r"\{[^/]+?\}", template)) + "$"
        if re.match(pattern, path):
            assert method.lower() in methods, f"{method} {template} is not documented"
            return methods[method.lower()]
    raise AssertionError(f"{path} is not documented in the OpenAPI schema")


def validate(path: str, method: str, status: int, body) -> None:
    """Fail unless ``status`` is documented for the operation and ``body`` fits its schema."""
    answers = operation(path, method)["responses"]
    assert str(status) in answers, f"{method} {path} answered {status}, which the schema does not document"
    content = answers[str(status)].get("content", {})
    schema = (content.get("application/json") or {}).get("schema")
    if schema is None:
        return
    check_body(schema, body)
