"""Generated bad input against every write endpoint of the API (read from our OpenAPI
document) and every participant form: no answer is a 5xx, and no row is written.

hypothesis and schemathesis are not installed, so the inputs come from a seeded generator:
for each operation, bodies whose documented fields get values of the wrong type (a list
for a string, text for a number, an unknown choice...), bodies that are not objects, and
raw bodies that are not JSON at all (broken syntax, bad bytes, deep nesting, a wrong
content type). Each body is wrong in at least one field the endpoint checks, so a
correct server refuses every one of them. The seed is fixed: a failure is reproducible.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Participant
from annotation.services.authoring.studies import load_study_file
from annotation.services.web.json_input import MAX_JSON_DEPTH
from tests.api.openapi import openapi
from tests.game_helpers import boundary_study_file, guess, round_id, start_game, step_url
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.exams import exam_action
from tests.helpers.flow import start

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]
SEED = 20261123
BODIES_PER_OPERATION = 24
FORMS_PER_PAGE = 24
WRITE_METHODS = ("post", "put", "patch", "delete")


def row_counts() -> dict[str, int]:
    """The rows of every table of the platform and of the accounts it keeps, by model, in one
    query."""
    models = [
        *apps.get_app_config("annotation").get_models(),
        *apps.get_app_config("auth").get_models(),
        Token,
    ]
    tables = [connection.ops.quote_name(model._meta.db_table) for model in models]
    sql = " UNION ALL ".join(f"SELECT %s, COUNT(*) FROM {table}" for table in tables)  # noqa: S608 - our tables
    with connection.cursor() as cursor:
        cursor.execute(sql, [model.__name__ for model in models])
        return dict(cursor.fetchall())


# --- values of the wrong type, by JSON Schema type ----------------------------------------

WRONG = {
    "string": [{"a": 1}, [1, 2], True, "nul\x00byte"],
    "integer": ["abc", {}, [], 1.5, "1e999"],
    "number": ["abc", {}, []],
    "boolean": ["maybe", {}, [], 2],
    "array": [5, "text", {"a": 1}],
    "object": [[1], "text", 5],
}


def resolve(schema: dict) -> dict:
    """Follow ``$ref`` and take the first branch of ``allOf``/``oneOf``/``anyOf``."""
    while True:
        if "$ref" in schema:
            schema = openapi()["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
        elif branches := schema.get("allOf") or schema.get("oneOf") or schema.get("anyOf"):
            schema = branches[0]
        else:
            return schema


def wrong_value(schema: dict, rng: random.Random):
    """A value the field must refuse, or None when its schema says too little to know."""
    schema = resolve(schema)
    if schema.get("readOnly"):
        return None
    if "enum" in schema:
        return rng.choice(["zz-not-a-choice", 12345, ["x"]])
    if schema.get("type") == "string" and "maxLength" in schema and rng.random() < 0.3:
        return "x" * (schema["maxLength"] + 1)
    pool = WRONG.get(schema.get("type", ""))
    return rng.choice(pool) if pool else None


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


RAW_BODIES: list[tuple[bytes, str]] = [
    (b"{", "application/json"),
    (b'{"title": ', "application/json"),
    (b"\xff\xfe\xfa", "application/json"),
    (deep(5000).encode(), "application/json"),
    (('{"items": ' + deep(MAX_JSON_DEPTH + 2) + "}").encode(), "application/json"),
    (b'{"title": ' + b"7" * 4301 + b"}", "application/json"),
    (b'{"title": NaN}', "application/json"),
    (b'{"title": -Infinity}', "application/json"),
    (b'{"title": "nul\\u0000byte"}', "application/json"),
    (b'{"provenance": {"\\u0000": 1}}', "application/json"),
    (b'{"status": "\\ud800", "format": "\\udfff"}', "application/json"),
    (b"title=x", "application/x-www-form-urlencoded"),
    (b"plain text", "text/plain"),
    (b"<xml/>", "application/xml"),
]
NOT_OBJECTS = [[], [{}], "text", 5, None, True]


def json_bodies(schema: dict | None, rng: random.Random) -> Iterator[tuple[bytes, str]]:
    """Bad bodies for an operation whose JSON request body has ``schema``."""
    fields = resolve(schema)["properties"] if schema else {}
    targets = [name for name, field in fields.items() if wrong_value(field, random.Random(0)) is not None]
    yield from RAW_BODIES
    if not targets:
        return
    for value in NOT_OBJECTS:
        yield json.dumps(value).encode(), "application/json"
    for _ in range(BODIES_PER_OPERATION):
        chosen = rng.sample(targets, rng.randint(1, min(3, len(targets))))
        body = {name: wrong_value(fields[name], rng) for name in chosen}
        if rng.random() < 0.3:
            body["not_a_field"] = rng.choice([1, "x", {}])
        yield json.dumps(body).encode(), "application/json"


def ndjson_bodies(rng: random.Random) -> Iterator[tuple[bytes, str]]:
    """Bad JSON Lines for the items upload: every line lacks or breaks a checked field."""
    item_fields = {
        "external_id": {"type": "string", "maxLength": 200},
        "payload": {"type": "object"},
        "attention_check": {"type": "boolean"},
        "gold": {"type": "object"},
        "provenance": {"type": "object"},
    }
    yield b"{\n", "application/x-ndjson"
    yield b"\xff\xfe\n", "application/x-ndjson"
    yield deep(5000).encode(), "application/x-ndjson"
    yield b"[]\n5\nnull\n", "application/x-ndjson"
    yield b'{"external_id": ' + b"1" * 4301 + b"}\n", "application/x-ndjson"
    yield b'{"external_id": "a", "provenance": {"score": NaN}}\n', "application/x-ndjson"
    yield b'{"external_id": "a", "provenance": {"k": "\\u0000"}}\n', "application/x-ndjson"
    yield b'{"external_id": "\\ud800"}\n', "application/x-ndjson"
    for _ in range(BODIES_PER_OPERATION):
        lines = []
        for _ in range(rng.randint(1, 4)):
            chosen = rng.sample(sorted(item_fields), rng.randint(1, 3))
            lines.append(json.dumps({name: wrong_value(item_fields[name], rng) for name in chosen}))
        yield "\n".join(lines).encode(), rng.choice(["application/x-ndjson", "application/jsonl"])


def write_operations(path_values: dict[str, str]) -> Iterator[tuple[str, str, dict]]:
    """(method, concrete path, operation) for every documented write."""
    for template, methods in openapi()["paths"].items():
        path = re.sub(r"\{(\w+)\}", lambda m: path_values[m.group(1)], template)
        for method in WRITE_METHODS:
            if method in methods:
                yield method, path, methods[method]


def operation_bodies(operation: dict, rng: random.Random) -> Iterator[tuple[bytes, str]]:
    content = operation.get("requestBody", {}).get("content", {})
    if "application/x-ndjson" in content:
        yield from ndjson_bodies(rng)
    else:
        yield from json_bodies((content.get("application/json") or {}).get("schema"), rng)


@pytest.fixture
def api_world(users, owned_study, enrolled):
    """A researcher's study with a participant, and clients for the owner and a stranger."""
    participant = enrolled(owned_study)
    owner = APIClient()
    owner.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=users['owner'])[0].key}")
    values = {
        "slug": "owned",
        "public_id": participant.public_id,
        "export_id": "999999",
        "job_id": "999999",
        "number": "1",
    }
    return owner, values


def test_fuzz_every_api_write_refuses_generated_bad_input(api_world):
    owner, path_values = api_world
    rng = random.Random(SEED)
    before = row_counts()
    tried: list[str] = []
    for method, path, operation in write_operations(path_values):
        client = APIClient() if "auth/token" in path else owner
        for body, content_type in operation_bodies(operation, rng):
            answer = client.generic(method.upper(), path, body, content_type=content_type)
            assert answer.status_code < 500, (method, path, body[:200], answer.content[:500])
            assert answer.status_code >= 400, (method, path, body[:200], answer.status_code)
            tried.append(f"{method} {path}")
    assert row_counts() == before
    assert len(set(tried)) >= 10  # every write the schema documents was driven
    assert len(tried) > 300


def test_fuzz_the_study_upload_page_refuses_what_the_api_refuses(client, users):
    """The upload page takes the same study files as ``POST /studies/``: the same bad ones."""
    client.force_login(users["owner"])
    create = openapi()["paths"]["/api/v1/studies/"]["post"]
    rng = random.Random(f"{SEED}-upload")
    before = row_counts()
    for body, _ in operation_bodies(create, rng):
        page = client.post("/research/studies/new/", {"study_file": SimpleUploadedFile("s.json", body)})
        assert page.status_code == 400, (body[:200], page.status_code)
    assert row_counts() == before


# --- participant forms -------------------------------------------------------------------

# Text no field of an answer form takes: empty, control characters, too long, not a number
# that parses, look-alike digits, choices that do not exist.
BAD_FORM_TEXT = [
    "", "\x00", "x" * 5000, "-1", "99999999999999999999999", "NaN", "1e3", "١", "１",
    "None", "[]", "{}", "supports\x00", "-0", "2.5", "most least",
]  # fmt: skip


def form_fields(html: str) -> list[str]:
    names = set(re.findall(r'name="([\w\-\[\]]+)"', html)) - {"csrfmiddlewaretoken"}
    return sorted(names)


def bad_forms(fields: list[str], rng: random.Random) -> Iterator[dict]:
    yield {}
    for _ in range(FORMS_PER_PAGE):
        chosen = rng.sample(fields, rng.randint(1, len(fields))) if fields else []
        form: dict[str, list[str] | str] = {name: rng.choice(BAD_FORM_TEXT) for name in chosen}
        if chosen and rng.random() < 0.3:
            form[rng.choice(chosen)] = [rng.choice(BAD_FORM_TEXT), rng.choice(BAD_FORM_TEXT)]
        if rng.random() < 0.2:
            form["not_a_field"] = "1"
        yield form


def survey_page(example_study_file, kind: str) -> tuple[Client, str, str]:
    """A Prolific participant on the first page of the example study of ``kind``."""
    study = load_study_file(example_study_file(kind)).study
    client = Client()
    html = start(client, study.slug, f"?PROLIFIC_PID={prolific_id(f'fuzz-{kind}')}")
    action = re.search(r'action="(/s/[\w-]+/a/\d+/)"', html)
    assert action, html
    return client, action.group(1), html


@pytest.mark.parametrize("kind", ["claim", "likert", "ranking", "plausibility", "simulation-pairwise"])
def test_fuzz_every_answer_form_refuses_generated_bad_input(example_study_file, kind):
    client, action, html = survey_page(example_study_file, kind)
    rng = random.Random(f"{SEED}-{kind}")
    before = row_counts()
    for form in bad_forms(form_fields(html), rng):
        answer = client.post(action, form)
        assert answer.status_code == 400, (kind, form, answer.status_code)
    assert row_counts() == before


def test_fuzz_the_exam_form_refuses_generated_bad_input(example_study_file):
    load_study_file(example_study_file("simulation-exam"))
    main = example_study_file("plausibility")
    main.update(qualification="demo-simulation-exam")
    study = load_study_file(main).study
    client = Client()
    html = start(client, study.slug, f"?PROLIFIC_PID={prolific_id('fuzz-exam')}")
    rng = random.Random(f"{SEED}-exam")
    before = row_counts()
    for form in bad_forms(form_fields(html), rng):
        answer = client.post(exam_action(html), form)
        assert answer.status_code < 500, (form, answer.status_code)
    assert row_counts() == before


# Reasons the game never takes (control characters, too long), with categories it has not.
BAD_REASONS = ["nul\x00byte", "x" * 5001, "\x00"]
BAD_CATEGORIES = ["zz-not-a-category", "", "\x00", "x" * 300]


def test_fuzz_the_game_round_steps_refuse_generated_bad_input():
    study = load_study_file(boundary_study_file(slug="fuzz-game", items=3)).study
    client = Client()
    number = round_id(start_game(client, study.slug).content.decode())
    rng = random.Random(f"{SEED}-game")
    before = row_counts()
    headers = {"HX-Request": "true"}
    for _ in range(FORMS_PER_PAGE):
        seen = {"seen": rng.choice(BAD_FORM_TEXT)}
        assert client.post(step_url(study.slug, number, "reveal"), seen, headers=headers).status_code < 500
        bad_guess = {"guess": rng.choice(BAD_FORM_TEXT)}
        assert (
            client.post(step_url(study.slug, number, "guess"), bad_guess, headers=headers).status_code < 500
        )
    guess(client, study.slug, number, 1)
    for _ in range(FORMS_PER_PAGE):
        categories = rng.sample(BAD_CATEGORIES, rng.randint(0, 2))
        form = {"reason": rng.choice(BAD_REASONS), "reason_categories": categories}
        answer = client.post(step_url(study.slug, number, "answer"), form, headers=headers)
        assert 400 <= answer.status_code < 500, (form, answer.status_code)
    assert row_counts() == before
    assert Participant.objects.count() == 1


# --- text nothing can store: NUL, lone surrogates, NaN, huge integers ---------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"title": ' + b"9" * 4301 + b"}", "body"),
        (b'{"title": NaN}', "body"),
        (b'{"title": Infinity}', "body"),
        (b'{"title": "a\\u0000b"}', "title"),
        (b'{"provenance": {"note": "\\u0000"}}', "provenance.note"),
        (b'{"status": "\\ud800"}', "status"),
    ],
)
def test_json_nobody_can_store_is_a_400_naming_the_field(api_world, body, field):
    owner, _ = api_world
    before = row_counts()
    for path in ("/api/v1/studies/", "/api/v1/studies/owned/status/", "/api/v1/auth/token/"):
        client = APIClient() if "token" in path else owner
        answer = client.post(path, body, content_type="application/json")
        assert answer.status_code == 400, (path, answer.content[:300])
        assert field in answer.json(), (path, answer.json())
        answer.content.decode("utf-8")  # the answer is text: nothing unencodable echoed
    assert row_counts() == before


def test_a_nul_in_the_query_path_or_form_is_a_400_naming_it(api_world, client, users):
    owner, _ = api_world
    before = row_counts()
    entry = Client().get("/s/owned/?PROLIFIC_PID=a%00b")
    assert entry.status_code == 400
    assert "PROLIFIC_PID" in entry.content.decode()
    consent = Client().post("/s/owned/consent/", {"PROLIFIC_PID": "a\x00b", "STUDY_ID": "s"})
    assert consent.status_code == 400
    assert "PROLIFIC_PID" in consent.content.decode()
    listed = owner.get("/api/v1/jobs/?kind=a%00b")
    assert listed.status_code == 400
    assert listed.json() == {"kind": ["Contains a NUL character (\\u0000), which cannot be stored."]}
    detail = owner.get("/api/v1/studies/owned/participants/%00/")
    assert detail.status_code == 400
    assert "path" in detail.json()
    client.force_login(users["owner"])
    assert client.get("/research/s/owned/participants/a%00b/").status_code == 400
    assert row_counts() == before
