"""Generated bad input against every HTML form a participant, a player or a researcher can
post: no answer is a 5xx.

The forms are found, not listed. Every route of the URL conf (but the JSON API, fuzzed by
``test_fuzz_bad_inputs.py``, and Django's admin) is filled with the values of a small world:
a study of every participant kind, each with a participant part-way through it, an exam, the
game, and a researcher's study with its items, participants, invitations and platforms. A
route whose parameters the world cannot fill fails the test, so a new page is fuzzed from
the day it is added. Every page of the world is read first; each ``<form>`` on it (its
``action`` or ``hx-post``, its fields and their values) is then posted back with seeded bad
values in some of its fields (a body the same client already posted to the same form is not
sent again), and every route that no page holds a form for is posted to with fields named
as any template names them. A route that takes no POST answers 405.

The values are those nothing may turn into a 500: integers ``int()`` refuses or no column
holds (5,000 digits, ``1e30``, ``-1``, 2**31, 2**63), digits ``str.isdigit`` accepts and
``int`` does not (``²``) or that are not ASCII (``٣``), NaN and infinities, NUL, a lone
surrogate (sent as the bytes a browser would send), very long text; and per route a form
body over Django's bound on form text and a file over the upload bound.
"""

from __future__ import annotations

import logging
import os
import random
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote_from_bytes, urlsplit

import pytest
from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotation.models import Item, Participant, Study
from annotation.research.views.platforms import ACTIONS
from annotation.services.authoring.invitations import invitation_create
from annotation.services.authoring.studies import load_study_file
from tests.factories import researcher_user
from tests.game_helpers import boundary_study_file, start_game
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.flow import start

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]
SEED = 20261129
FORMS_PER_TARGET = 4  # forms with random bad values posted to each form found, besides PER_FIELD
ANSWER_FORMS = 8
FULL_MATRIX_FIELDS = 12  # forms up to this many fields get every value in every field
ROUTES_NOT_FUZZED = {
    "api/": "the JSON API: test_fuzz_bad_inputs.py drives it from its schema",
    "admin/": "Django's admin: staff only, Django's own forms",
}
# Kinds whose example study a participant works through (every question type of a
# questionnaire is in one of its three examples).
PARTICIPANT_KINDS = [
    "claim", "likert", "ranking", "plausibility", "simulation", "simulation-pairwise",
    "questionnaire-errors", "questionnaire-best-worst", "questionnaire-pairwise",
]  # fmt: skip

SURROGATE = "\ud800"
# Tried in every field of every form; NUL and the surrogate, refused before any view
# (annotation/middleware.py), are among the random ones.
PER_FIELD = ["9" * 5000, "1e30", "-1", str(2**31), str(2**63), "²", "٣", "NaN"]
BAD_VALUES = [
    "9" * 5000, "1e30", "-1", str(2**31), str(2**63), "-" + str(2**63), "²", "٣", "١٢", "NaN", "inf",
    "-Infinity", "\x00", SURROGATE, "x" * 5000, "", "0", "1.5", " 7 ", "[]", "{}", "None",
]  # fmt: skip


# --- the world ----------------------------------------------------------------------------------


@dataclass
class World:
    owner: object
    researcher_slug: str
    participants: dict[str, Client]  # study slug → the participant's client
    values: dict[str, list[str]] = field(default_factory=dict)  # route parameter → values
    assignments: dict[str, str] = field(default_factory=dict)  # study slug → the page held
    newcomers: dict[str, Client] = field(default_factory=dict)  # entered, not yet consented


def build_world(example_study_file) -> World:
    owner = researcher_user("fuzz-owner", password="pw", is_staff=True, email="owner@example.org")
    participants: dict[str, Client] = {}
    load_study_file(example_study_file("simulation-exam"), owner=owner)
    for kind in PARTICIPANT_KINDS:
        study = load_study_file(example_study_file(kind), owner=owner).study
        participants[study.slug] = Client(raise_request_exception=False)
        start(participants[study.slug], study.slug, f"?PROLIFIC_PID={prolific_id('fuzz-' + kind)}")
    gated = example_study_file("plausibility") | {
        "slug": "fuzz-gated",
        "qualification": "demo-simulation-exam",
    }
    load_study_file(gated, owner=owner)
    participants["fuzz-gated"] = Client(raise_request_exception=False)
    start(participants["fuzz-gated"], "fuzz-gated", f"?PROLIFIC_PID={prolific_id('fuzz-exam')}")
    game = load_study_file(boundary_study_file(slug="fuzz-game", items=3), owner=owner).study
    participants[game.slug] = Client(raise_request_exception=False)
    start_game(participants[game.slug], game.slug)
    researched = Study.objects.get(
        kind="questionnaire", slug=_slug_of(example_study_file("questionnaire-errors"))
    )
    invitation = invitation_create(created_by=owner, email="new@example.org")
    world = World(owner=owner, researcher_slug=researched.slug, participants=participants)
    newcomer = Client(raise_request_exception=False)
    entry = newcomer.get(
        f"/s/demo-claims/?PROLIFIC_PID={prolific_id('fuzz-newcomer')}&STUDY_ID=s&SESSION_ID=t"
    )
    assert entry.status_code == 302
    world.newcomers["demo-claims"] = newcomer  # the consent form, on the page before consent
    world.values = {
        "item_id": [str(Item.objects.filter(study=researched).values_list("pk", flat=True).first())],
        "public_id": [Participant.objects.filter(enrollments__study=researched).first().public_id],
        "source": ["prolific"],
        "platform": ["prolific", "mturk"],
        "action": list(ACTIONS),
        "export_id": ["999999"],
        "job_id": ["999999"],
        "token": [invitation.token],
        "name": ["formats"],
        "category": ["news"],
        "fmt": ["md", "json"],
        "number": ["1"],
        "uidb64": [urlsafe_base64_encode(force_bytes(owner.pk))],
    }
    world.values["reset_token"] = [default_token_generator.make_token(owner)]
    return world


def _slug_of(data: dict) -> str:
    return data["slug"]


# --- routes -------------------------------------------------------------------------------------


def every_route() -> Iterator[str]:
    """Every route of the URL conf as its pattern text (``s/<slug:slug>/consent/``)."""

    def walk(patterns, prefix: str) -> Iterator[str]:
        for entry in patterns:
            text = prefix + str(entry.pattern)
            if isinstance(entry, URLResolver):
                yield from walk(entry.url_patterns, text)
            elif isinstance(entry, URLPattern):
                yield text

    yield from walk(get_resolver().url_patterns, "")


PARAMETER = re.compile(r"<(?:(\w+):)?(\w+)>")


def fuzzed_routes() -> list[str]:
    """The routes to drive: the participants' first (a researcher's forms may block one),
    the ones that end a participation (leave, done) after the others."""
    routes = [r for r in every_route() if not r.startswith(tuple(ROUTES_NOT_FUZZED))]

    def order(route: str) -> tuple:
        ending = any(word in route for word in ("leave", "done", "logout"))
        return (not route.startswith(("s/", "play/")), ending, route)

    return sorted(routes, key=order)


def concrete_urls(route: str, world: World) -> list[tuple[str, Client | None]]:
    """The route filled with the world's values, each with the client that posts to it
    (None: a researcher's or an anonymous client made fresh for it)."""
    if route.startswith("play/s/"):
        return [
            (url, world.participants["fuzz-game"])
            for url in _filled(route, world, slug="fuzz-game", client=None)
        ]
    if route.startswith("s/"):
        newcomers = world.newcomers.items() if "assignment_id" not in route else []
        return [
            (url, client)
            for slug, client in [*world.participants.items(), *newcomers]
            for url in _filled(route, world, slug=slug, client=client)
        ]
    slug = world.researcher_slug if route.startswith("research/") else "fuzz-game"
    return [(url, None) for url in _filled(route, world, slug=slug, client=None)]


def _filled(route: str, world: World, *, slug: str, client: Client | None) -> list[str]:
    urls = ["/" + route.replace("\\", "")]
    for _, name in PARAMETER.findall(route):
        key = "reset_token" if name == "token" and "reset" in route else name
        if key == "slug":
            options = [slug]
        elif key == "assignment_id":
            if client is not None and slug not in world.assignments:
                world.assignments[slug] = _assignment(client, slug)
            options = [world.assignments[slug]] if client is not None else []
        else:
            options = world.values.get(key, [])
        if not options:
            raise AssertionError(
                f"The fuzz has no value for <{name}> of route {route!r}: add one to the world."
            )
        pattern = re.compile(rf"<(?:\w+:)?{name}>")
        urls = [pattern.sub(str(value), url, count=1) for url in urls for value in options]
    return urls


def _assignment(client: Client, slug: str) -> str:
    """The page the participant holds in ``slug`` (its task or exam page's form), else 0."""
    for path in (f"/s/{slug}/task/", f"/s/{slug}/exam/", f"/play/s/{slug}/"):
        html = client.get(path, follow=True).content.decode()
        if found := re.search(rf"/s/{re.escape(slug)}/(?:exam/)?a/(\d+)/", html):
            return found[1]
    return "0"


# --- forms found on the pages --------------------------------------------------------------------


@dataclass
class Form:
    action: str
    method: str
    fields: dict[str, list[str]] = field(default_factory=dict)  # name → the values the page offers
    files: list[str] = field(default_factory=list)


class FormReader(HTMLParser):
    """The forms of a page: action (or hx-post), method, fields with their values."""

    def __init__(self, page_url: str):
        super().__init__()
        self.page_url, self.forms, self.current = page_url, [], None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "form":
            action = attributes.get("hx-post") or attributes.get("action") or self.page_url
            method = "post" if "hx-post" in attributes else (attributes.get("method") or "get").lower()
            self.current = Form(urlsplit(action).path or self.page_url, method)
            if not {"data-never-submit", "inert"} & set(attributes):  # pictures of forms (examples)
                self.forms.append(self.current)
        elif self.current is not None and tag in ("input", "select", "textarea", "button", "option"):
            name = attributes.get("name")
            if tag == "option" and getattr(self, "select", None):
                self.current.fields[self.select].append(attributes.get("value") or "")
            if tag == "select":
                self.select = name
            if not name or name == "csrfmiddlewaretoken":
                return
            if attributes.get("type") == "file":
                self.current.files.append(name)
                return
            values = self.current.fields.setdefault(name, [])
            if attributes.get("value") is not None:
                values.append(attributes["value"])

    def handle_endtag(self, tag):
        if tag == "form":
            self.current = None
        elif tag == "select":
            self.select = None


# Pages whose forms show only with a query: read as well as the route's own page.
PAGES_WITH_A_QUERY = {"research/builder/": "?template=questionnaire-errors"}


def forms_of(client: Client, url: str) -> list[Form]:
    page = client.get(url)
    if page.status_code != 200 or "html" not in page.get("Content-Type", ""):
        return []
    reader = FormReader(url)
    reader.feed(page.content.decode())
    return reader.forms


def template_field_names() -> list[str]:
    """Every field name any template gives a form field: what a route without a form of
    its own on any page is posted with."""
    roots = [Path(settings.BASE_DIR) / "templates"]
    names: set[str] = set()
    for root in roots:
        for path in root.rglob("*.html"):
            names |= set(re.findall(r'\bname="([\w\-\[\]]+)"', path.read_text()))
    return sorted(names - {"csrfmiddlewaretoken"})


# --- bad bodies ----------------------------------------------------------------------------------


def encoded(pairs: list[tuple[str, str]]) -> bytes:
    """A form body as a browser sends it; a lone surrogate as its (invalid) UTF-8 bytes."""
    return b"&".join(
        quote_from_bytes(name.encode()).encode()
        + b"="
        + quote_from_bytes(value.encode("utf-8", "surrogatepass")).encode()
        for name, value in pairs
    )


def bad_bodies(
    form: Form, pool: list[str], rng: random.Random, count: int
) -> Iterator[list[tuple[str, str]]]:
    """Every field of the form with every value class of ``PER_FIELD`` (the others keep
    values the page offers), then ``count`` forms with one to three fields (or a field the
    page lacks) given any bad value, sometimes twice."""
    names = sorted(form.fields)  # a route no page holds a form for: only the random forms

    def page_values(leaving_out: set[str]) -> list[tuple[str, str]]:
        return [(n, rng.choice(v) if v else "") for n, v in form.fields.items() if n not in leaving_out]

    if len(names) <= FULL_MATRIX_FIELDS:
        for name in names:
            for value in PER_FIELD:
                yield [*page_values({name}), (name, value)]
    else:  # a long form (the builder's) lists every error at once: a value in many fields
        for value in PER_FIELD:
            for _ in range(3):
                chosen = set(rng.sample(names, len(names) // 3))
                yield [*page_values(chosen), *((name, value) for name in sorted(chosen))]
    names = names or rng.sample(pool, min(6, len(pool)))
    for _ in range(count):
        chosen = set(rng.sample(names, rng.randint(1, min(3, len(names)))))
        pairs = page_values(chosen)
        for name in sorted(chosen):
            pairs += [(name, rng.choice(BAD_VALUES)) for _ in range(rng.choice([1, 1, 1, 2]))]
        if rng.random() < 0.2:
            pairs.append((rng.choice(pool), rng.choice(BAD_VALUES)))
        yield pairs


@dataclass
class Outcome:
    cases: int = 0
    routes: set[str] = field(default_factory=set)
    forms: set[tuple] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)

    def check(self, route: str, what: str, answer) -> None:
        self.cases += 1
        if answer.status_code >= 500:
            self.errors.append(f"{answer.status_code} {route} {what[:300]!r}")


def post_form(client: Client, form: Form, body: bytes):
    """Send ``body`` (``encoded``) to the form: as its query for a GET form, else as a form post."""
    if form.method == "get":
        return client.get(f"{form.action}?{body.decode()}")
    return client.generic(
        "POST", form.action, body, content_type="application/x-www-form-urlencoded", HTTP_HX_REQUEST="true"
    )


# --- the test ------------------------------------------------------------------------------------


def test_fuzz_every_html_form_refuses_generated_bad_input_without_a_server_error(
    example_study_file, settings, caplog
):
    settings.API_MAX_UPLOAD_BYTES = 64 * 1024  # the upload bound, small enough to pass cheaply
    # The refusals the fuzz expects are not logged: Django's warning on each 4xx answer and
    # its security log's traceback on each body over the bound (a 400). A 5xx is still
    # logged, with its traceback, besides failing the test.
    caplog.set_level(logging.ERROR, logger="django.request")
    caplog.set_level(logging.CRITICAL, logger="django.security")
    began = time.monotonic()
    world = build_world(example_study_file)
    rng = random.Random(SEED)
    pool = template_field_names()
    huge = encoded([("field", "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1))])
    outcome = Outcome()
    sent: set[tuple] = set()  # (who, method, action, body) of each case posted
    routes = fuzzed_routes()
    spent: dict[str, float] = {}
    for route in routes:
        route_began = time.monotonic()
        for url, participant in concrete_urls(route, world):
            client = participant or researcher_client(world, route)
            pages = [url, *([url + PAGES_WITH_A_QUERY[route]] if route in PAGES_WITH_A_QUERY else [])]
            found = [form for page in pages for form in forms_of(client, page)]
            forms = [form for form in found if _route_of(form.action) is not None]
            new = [f for f in forms if _form_key(f, participant) not in outcome.forms]
            outcome.forms |= {_form_key(f, participant) for f in forms}
            outcome.routes.add(route)
            targets = new if forms else [Form(url, "post")]
            for form in targets:
                count = ANSWER_FORMS if "/a/" in form.action else FORMS_PER_TARGET
                for pairs in bad_bodies(form, pool, rng, count):
                    body = encoded(pairs)
                    case = (_who(participant, route), form.method, form.action, body)
                    if case in sent:  # the same body from the same client: an exact repeat
                        continue
                    sent.add(case)
                    answer = post_form(client, form, body)
                    outcome.check(route, f"{form.method} {form.action} {pairs}", answer)
                for name in form.files:
                    upload = {name: _big_file(settings.API_MAX_UPLOAD_BYTES + 1)}
                    answer = client.post(
                        form.action, {**{n: v[0] for n, v in form.fields.items() if v}, **upload}
                    )
                    outcome.check(route, f"file over the bound on {form.action}", answer)
            answer = client.generic("POST", url, huge, content_type="application/x-www-form-urlencoded")
            outcome.check(route, f"a body over DATA_UPLOAD_MAX_MEMORY_SIZE on {url}", answer)
        spent[route] = time.monotonic() - route_began
    seconds = time.monotonic() - began
    print(
        f"\nHTML fuzz: {len(outcome.routes)} routes, {len(outcome.forms)} forms, "
        f"{outcome.cases} cases, {seconds:.0f} s"
    )
    if os.environ.get("FUZZ_LIST"):  # which forms were found, and the slowest routes
        print(sorted(spent.items(), key=lambda kv: -kv[1])[:12])
        print("\n".join(sorted(map(str, outcome.forms))))
    assert not outcome.errors, "\n".join(outcome.errors)
    assert outcome.routes == set(routes)  # every route was driven
    assert outcome.cases > 1000


def _form_key(form: Form, participant: Client | None) -> tuple:
    """One form, wherever it shows (a participant's forms are theirs: one per study)."""
    return (form.action if participant else _route_of(form.action), form.method, tuple(sorted(form.fields)))


def researcher_client(world: World, route: str) -> Client:
    client = Client(raise_request_exception=False)
    if _owners(route):
        client.force_login(world.owner)
    return client


def _owners(route: str) -> bool:
    """Whether a route's pages are read and posted to by the researcher (else anonymously)."""
    return route.startswith("research/") or "password_change" in route


def _who(participant: Client | None, route: str) -> object:
    """Who posts on a route: the participant (each their own), else the researcher or nobody."""
    return id(participant) if participant is not None else _owners(route)


def _route_of(path: str) -> str | None:
    from django.urls import Resolver404, resolve

    try:
        return resolve(path).route
    except Resolver404:
        return None


def _big_file(size: int):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("big.csv", b"id,context\n" + b"x" * size)


def test_every_route_is_fuzzed_or_named_as_not():
    """The fuzz drives routes from the URL conf: a route it leaves out is one of the named
    exceptions (a new API or admin route), never one forgotten."""
    fuzzed = set(fuzzed_routes())
    left_out = [route for route in every_route() if route not in fuzzed]
    assert all(route.startswith(tuple(ROUTES_NOT_FUZZED)) for route in left_out)
    assert len(fuzzed) > 50
