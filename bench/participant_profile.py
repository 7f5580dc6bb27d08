"""Where a participant request's time goes: the survey and game steps profiled in-process.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/roft_profile REDIS_URL=redis://127.0.0.1:6379/9 \\
        .venv/bin/python bench/participant_profile.py [--participants 30] [--players 30]

``bench/load.py`` measures throughput through gunicorn with a client on the same cores;
this script explains its figures. One thread drives Django's full request path (every
middleware, sessions in Redis, CSRF enforced, DEBUG off) with the test client, against the
PostgreSQL database named by DATABASE_URL (created and migrated if missing; use a scratch
one), through the same flows as ``bench/load.py``: participants through a claim survey
(study link, consent, then page and submit), players through game rounds (reveals, a
guess, the answer). For each step it prints the milliseconds per request, with the two
anchors of ``bench/load.py`` measured the same way (hello-world and the minimal locked
write), and the ratio of the survey's and the game's cost per request to each anchor; in
wall time and in this process's CPU time (PostgreSQL's own work is in the first only). No
HTTP and no client threads are in these figures: they are the server's own cost.
``--one-trip``: participants answer as htmx's task form does (the answer's response is the
next page: ``submit+page``), else POST, redirect, GET.

Then a profile (cProfile; of CPU time with ``--cpu-profile``, else wall time) of the same
flows, its time split by where it is spent: waiting on PostgreSQL (statements and commits),
Django's ORM building SQL and model objects, template rendering, sessions/CSRF/messages/auth,
the rest of Django's request handling, and our own code; and the functions that cost most.
The profiler slows Python code (not PostgreSQL) down, so the shares lean towards Python; the
timings above are taken without it.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._database import ensure_database  # noqa: E402 - after the path
from bench._django import production_like_env  # noqa: E402 - after the path

PAGES = 20  # pages per participant (the survey's items_per_session)
ROUNDS = 10  # rounds per player
HTMX = {"HTTP_HX_REQUEST": "true"}
BOOSTED = {**HTMX, "HTTP_HX_BOOSTED": "true"}  # the task form's answer: htmx boosts that form
OTHER = "Python and libraries (other)"
PASS_THROUGH = ("django/utils/", "django/dispatch/")  # helpers: their time goes to their callers

# Where a function's own time goes, by the file it is in (first match wins).
CATEGORIES = [
    ("PostgreSQL (statements, commits)", ("psycopg",)),  # the driver's execute, fetch and commit
    ("ORM: SQL compilation and models", ("django/db/",)),
    ("templates", ("django/template/", "django/templatetags/", "annotation/templatetags/")),
    (
        "sessions, CSRF, auth, messages",
        ("django/contrib/", "django/middleware/csrf", "django/core/signing", "django/core/cache", "redis/"),
    ),
    ("rest of Django (handlers, URLs, HTTP)", ("django/", "whitenoise/")),
    ("our code", ("annotation/", "scoring/", "roft_site/")),
]


def setup() -> None:
    os.environ.update(production_like_env("testserver"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-not-a-secret")
    ensure_database(os.environ["DATABASE_URL"])
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


class Timer:
    """Milliseconds per request, by step."""

    def __init__(self):
        self.seconds: dict[str, list[float]] = defaultdict(list)
        self.cpu: dict[str, list[float]] = defaultdict(list)  # this process's CPU time (not PostgreSQL's)

    def call(self, step: str, method, *args, **kwargs):
        started, cpu = time.perf_counter(), time.process_time()
        response = method(*args, **kwargs)
        self.cpu[step].append(time.process_time() - cpu)
        self.seconds[step].append(time.perf_counter() - started)
        return response

    def ms(self, steps, cpu: bool = False) -> float:
        table = self.cpu if cpu else self.seconds
        values = [value for step in steps for value in table[step]]
        return 1000 * sum(values) / max(1, len(values))


def csrf(page) -> str:
    from bench.load import CSRF_FIELD

    return CSRF_FIELD.search(page.content.decode()).group(1)


def survey_participant(slug: str, timer: Timer, one_trip: bool = False) -> None:
    """A participant through the survey; ``one_trip``: answering as htmx's task form does
    (the answer's response is the next page), else POST, redirect, GET."""
    from django.test import Client

    from bench.load import SUBMIT_ACTION

    client = Client(enforce_csrf_checks=True)
    timer.call("enter", client.get, f"/s/{slug}/")
    page = timer.call("consent_get", client.get, f"/s/{slug}/consent/")
    timer.call("consent_post", client.post, f"/s/{slug}/consent/", {"csrfmiddlewaretoken": csrf(page)})
    page = timer.call("fetch", client.get, f"/s/{slug}/task/")
    for _ in range(PAGES):
        action = SUBMIT_ACTION.search(page.content.decode())
        if action is None:
            return
        form = {"csrfmiddlewaretoken": csrf(page), "label": "supports", "evidence": ["0"]}
        if one_trip:
            page = timer.call("submit+page", client.post, action.group(1), form, **BOOSTED)
            assert page.status_code == 200, page.status_code
            continue
        response = timer.call("submit", client.post, action.group(1), form)
        assert response.status_code == 302, response.status_code
        page = timer.call("fetch", client.get, f"/s/{slug}/task/")


def game_player(slug: str, timer: Timer, rng: random.Random) -> None:
    from django.test import Client

    from bench.load import ROUND, SEEN, SENTENCES

    client = Client(enforce_csrf_checks=True)
    landing = timer.call("landing", client.get, "/play/")
    timer.call("start", client.post, f"/play/s/{slug}/", {"csrfmiddlewaretoken": csrf(landing)})
    token = client.cookies["csrftoken"].value
    headers = {**HTMX, "HTTP_X_CSRFTOKEN": token}
    for _ in range(ROUNDS):
        page = timer.call("round_get", client.get, f"/s/{slug}/task/")
        match = ROUND.search(page.content.decode()) if page.status_code == 200 else None
        if match is None:
            return
        base = f"/s/{slug}/a/{match.group(1)}/boundary"
        shown = SEEN.search(page.content.decode())
        first = int(shown.group(1)) if shown else 1
        stop = rng.randint(first, SENTENCES - 1)
        for seen in range(first, stop + 1):
            timer.call("reveal", client.post, f"{base}/reveal/", {"seen": seen}, **headers)
        timer.call("guess", client.post, f"{base}/guess/", {"guess": stop}, **headers)
        response = timer.call("answer", client.post, f"{base}/answer/", {"reason": "It drifts."}, **headers)
        assert response.status_code == 200, response.status_code


def anchors(timer: Timer, count: int) -> None:
    from django.test import Client

    from bench.load import ANCHOR_ROWS

    client = Client()
    for n in range(count):
        timer.call("hello", client.get, "/bench/hello")
        timer.call("locked", client.get, f"/bench/locked-write/{n % ANCHOR_ROWS}")


def run(args, timer: Timer, survey: str, game: str) -> None:
    rng = random.Random(args.seed)
    for _ in range(args.participants):
        survey_participant(survey, timer, args.one_trip)
    for _ in range(args.players):
        game_player(game, timer, rng)
    anchors(timer, args.anchor_requests)


def drive_only(args) -> None:
    """``--drive-only``: a warm-up participant, then ``--participants`` more, on a small survey."""
    from bench.load import make_survey

    survey = f"profile-drive-{time.time_ns()}"
    make_survey(survey, 300, PAGES, 10)
    for _ in range(1 + args.participants):
        survey_participant(survey, Timer(), args.one_trip)


def make_studies(seed: int) -> tuple[str, str]:
    from bench.load import make_anchor_table, make_game, make_survey

    stamp = f"{int(time.time())}-{seed}"
    survey, game = f"profile-survey-{stamp}", f"profile-game-{stamp}"
    make_survey(survey, 5000, PAGES, 10)
    make_game(game, 2000)
    make_anchor_table()
    return survey, game


def category(key: tuple) -> str | None:
    """The category of a function's own time, by its file; None for the standard library,
    built-ins and Django's utilities, whose time belongs to whoever called them."""
    filename, _, function = key
    where = f"{filename} {function}"
    if any(helper in filename for helper in PASS_THROUGH):
        return None
    for name, markers in CATEGORIES:
        if any(marker in where for marker in markers):
            return name
    return None


def shares_by_category(stats: pstats.Stats) -> dict[str, float]:
    """Own time by category; a built-in's or the standard library's own time is split
    among its callers' categories in proportion to the calls' time (up to a few levels up)."""
    table = stats.stats  # type: ignore[attr-defined]
    shares: dict[str, float] = defaultdict(float)

    def give(key: tuple, seconds: float, depth: int) -> None:
        name = category(key)
        callers = table.get(key, (0, 0, 0, 0, {}))[4]
        if name is not None or depth > 4 or not callers:
            shares[name or OTHER] += seconds
            return
        weights = {caller: max(numbers[2], 1e-12) for caller, numbers in callers.items()}
        total = sum(weights.values())
        for caller, weight in weights.items():
            give(caller, seconds * weight / total, depth + 1)

    for key, (_, _, own, _, _) in table.items():
        give(key, own, 0)
    return shares


STEPS = ["hello", "locked", "fetch", "submit", "submit+page", "round_get", "reveal", "guess", "answer"]


def print_timings(timer: Timer) -> None:
    survey = timer.ms(["fetch", "submit", "submit+page"])
    game = timer.ms(["round_get", "reveal", "guess", "answer"])
    hello, locked = timer.ms(["hello"]), timer.ms(["locked"])
    print("ms per request, in-process, one thread (no HTTP, no client): wall, and this process's CPU")
    for step in [*STEPS, *(step for step in timer.seconds if step not in STEPS)]:  # entry steps last
        if timer.seconds[step]:
            wall, cpu, count = timer.ms([step]), timer.ms([step], cpu=True), len(timer.seconds[step])
            print(f"  {step:12} {wall:7.2f} ms, CPU {cpu:7.2f} ms  ({count} requests)")
    for name, cost in (("survey page (fetch, submit)", survey), ("game round step", game)):
        if not cost:
            continue
        print(
            f"  {name:28} {cost:6.2f} ms = {hello / cost:5.1%} of hello-world's rate, "
            f"{locked / cost:5.1%} of the locked write's"
        )


def print_profile(profile: cProfile.Profile, top: int) -> None:
    stats = pstats.Stats(profile)
    shares = shares_by_category(stats)
    total = sum(shares.values())
    print(f"\nprofile: {total:.2f} s of own time, by where it is spent")
    for name, seconds in sorted(shares.items(), key=lambda pair: -pair[1]):
        print(f"  {name:38} {seconds:6.2f} s {seconds / total:6.1%}")
    print(f"\nthe {top} functions with most time under them (cumulative):")
    stats.sort_stats("cumulative").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=30, help="survey participants (20 pages each)")
    parser.add_argument("--players", type=int, default=30, help="game players (10 rounds each)")
    parser.add_argument("--anchor-requests", type=int, default=600)
    parser.add_argument("--one-trip", action="store_true", help="the survey answered as htmx does (one trip)")
    parser.add_argument("--cpu-profile", action="store_true", help="profile CPU time, not wall time")
    parser.add_argument(
        "--drive-only",
        action="store_true",
        help="only drive --participants through a small survey (one warm-up first), nothing printed: "
        "for an instruction count under callgrind, whose difference between two counts of "
        "participants is independent of the machine's load",
    )
    parser.add_argument("--save", help="also write the profile here (for pstats, snakeviz)")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    setup()
    if args.drive_only:
        drive_only(args)
        return
    survey, game = make_studies(args.seed)
    run(args, Timer(), survey, game)  # warm: imports, template and URL caches, connections
    timer = Timer()
    run(args, timer, survey, game)
    print_timings(timer)
    profile = cProfile.Profile(time.process_time if args.cpu_profile else time.perf_counter)
    profile.enable()
    run(args, Timer(), survey, game)
    profile.disable()
    if args.save:
        profile.dump_stats(args.save)
    print_profile(profile, args.top)


if __name__ == "__main__":
    main()
