"""Load on the participant and game paths, against two anchors served by the same server.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/roft_load REDIS_URL=redis://127.0.0.1:6379/9 \\
        .venv/bin/python bench/load.py [--users 50] [--duration 20] [--paced 40] [--big-items 100000]

Starts gunicorn as docker-compose.yml does (``roft_site.wsgi``, 3 workers, DEBUG off) on a
loopback port against the database named by DATABASE_URL (created if missing; use a
scratch database: the run adds studies to it), with ``BENCH_ANCHORS=1`` so that the server
also has two anchor views (``roft_site/bench_views.py``): a hello-world and a minimal
locked write (one ``SELECT … FOR UPDATE`` of one row, one ``UPDATE``, one commit).

In one run, interleaved, each phase bounded by ``--duration`` seconds and ``--max-requests``:
``survey`` (``--users`` closed-loop participants, each with its own cookies, through the real
flow: study link, consent, then fetch page and submit with the CSRF token, a new participant
when one finishes), ``survey 1-trip`` (the same participants as a browser with JavaScript loops:
the answer's POST carries ``HX-Request`` and its response is the next page, no redirect, no GET;
the two alternated ``--one-trip-rounds`` times, with a table per loop at the end), ``hello``,
``locked``, ``game`` (as many players: start, then rounds of
reveals, a guess and the answer), ``hello``, ``locked``. Then ``paced`` participants (about
5 s per page, ``--paced`` seconds) for the latency a crowd sees, and the same survey on a
study of ``--small-items`` and one of ``--big-items`` items for the cost of study size.
Prints req/s and p50/p99 per step, the ratios to the anchors, then checks the database:
no item over its target, no participant given an item twice, every success reply has its
row. Each phase also prints its CPU milliseconds per request by process class (this client,
gunicorn, Redis, and the rest of the machine's busy time: PostgreSQL and the kernel; from
/proc), and a table compares them with the hello-world's:
which side a page's extra cost falls on. The survey phases also print the rows PostgreSQL
read and wrote per loop (one page fetched and answered), from the database's counters
(``pg_stat_database``), which each server process sends once it has been idle a moment:
those phases wait ``--stats-settle`` seconds before and after. The client is plain threads
on the same machine: its own CPU use caps the anchors first, so the ratios flatter the project a little.
"""

from __future__ import annotations

import argparse
import http.client
import math
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._database import copy_rows_like, ensure_database, settle_tables  # noqa: E402 - after the path
from bench._django import production_like_env  # noqa: E402 - after the path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only")

HOST = "127.0.0.1"
ANCHOR_ROWS = 1000
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
SUBMIT_ACTION = re.compile(r'action="(/s/[\w-]+/a/\d+/)"')
ROUND = re.compile(r"/a/(\d+)/boundary/")
SEEN = re.compile(r'name="seen" value="(\d+)"')
SENTENCES = 10
# Rows per INSERT of the bulk writes: PostgreSQL takes at most 65,535 bound parameters in
# one statement (psycopg 3 binds them on the server), and an item or assignment has 11.
BULK_BATCH = 2000


# --- the server ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def start_server(port: int, workers: int, root: Path) -> subprocess.Popen:
    """gunicorn with the compose file's command, plain HTTP on loopback."""
    env = {**os.environ, **production_like_env(HOST), "STATIC_ROOT": str(ROOT / "static")}
    gunicorn = Path(sys.executable).with_name("gunicorn")
    command = [str(gunicorn), "roft_site.wsgi", "--bind", f"{HOST}:{port}", "--workers", str(workers)]
    command += ["--log-level", "warning"]
    server = subprocess.Popen(command, cwd=root, env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if request(port, "GET", "/bench/hello", {})[0] == 200:
                return server
        except OSError:
            time.sleep(0.3)
    stop_server(server)
    sys.exit("gunicorn did not answer within 60 s")


def stop_server(server: subprocess.Popen) -> None:
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)


# --- the client ----------------------------------------------------------------------------


def request(port: int, method: str, path: str, cookies: dict, data=None, headers=None):
    """One request on a new connection (gunicorn's sync workers close each one)."""
    connection = http.client.HTTPConnection(HOST, port, timeout=60)
    head = {"Host": HOST, **(headers or {})}
    if cookies:
        head["Cookie"] = "; ".join(f"{key}={value}" for key, value in cookies.items())
    body = None
    if data is not None:
        body = urlencode(data, doseq=True)
        head["Content-Type"] = "application/x-www-form-urlencoded"
        head["Referer"] = f"http://{HOST}:{port}{path}"
    try:
        connection.request(method, path, body=body, headers=head)
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        set_cookies = response.headers.get_all("Set-Cookie") or []
        location = response.headers.get("Location", "") or response.headers.get("HX-Redirect", "")
        location = location or response.headers.get("HX-Push-Url", "")  # a one-trip answer's next page
        return response.status, text, set_cookies, location
    finally:
        connection.close()


@dataclass
class Stats:
    """Latencies per step, and the run's counts; shared by the user threads."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    failures: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    successes: int = 0  # submits (survey) or answers (game) that the server confirmed
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    measure_from: float = 0.0  # time.monotonic() before which latencies are not kept (paced start)

    def add(self, step: str, seconds: float, ok: bool) -> None:
        with self.lock:
            self.requests += 1
            if time.monotonic() >= self.measure_from:
                self.latencies[step].append(seconds)
            if not ok:
                self.failures[step] += 1

    def wait(self, seconds: float) -> None:
        """A participant's wait for their next page after answering (its requests counted apart)."""
        with self.lock:
            if time.monotonic() >= self.measure_from:
                self.latencies[PAGE_WAIT].append(seconds)


class Budget:
    """A phase ends at its deadline or after its number of requests, whichever comes first."""

    def __init__(self, seconds: float, max_requests: int):
        self.deadline = time.monotonic() + seconds
        self.left = max_requests
        self.lock = threading.Lock()

    def take(self) -> bool:
        with self.lock:
            if self.left <= 0 or time.monotonic() >= self.deadline:
                return False
            self.left -= 1
            return True


class Browser:
    """One participant's browser: its cookies, and a timed request per step."""

    def __init__(self, port: int, stats: Stats, budget: Budget):
        self.port, self.stats, self.budget, self.cookies = port, stats, budget, {}

    def call(self, step: str, method: str, path: str, data=None, headers=None, expect=(200, 302)):
        if not self.budget.take():
            raise TimeoutError
        if data is not None and "csrftoken" in self.cookies:
            headers = {**(headers or {}), "X-CSRFToken": self.cookies["csrftoken"]}
        started = time.perf_counter()
        status, text, set_cookies, location = request(self.port, method, path, self.cookies, data, headers)
        elapsed = time.perf_counter() - started
        messages = False
        for raw in set_cookies:
            for key, morsel in SimpleCookie(raw).items():
                self.cookies[key] = morsel.value
                messages |= key == "messages" and bool(morsel.value)
        self.stats.add(step, elapsed, status in expect)
        return status, text, location, messages


class Waiting:
    """Cookies of participants and players left mid-study when a phase ended: the next
    phase on the same study goes on with them, as a crowd would, instead of starting
    everyone again at the study link."""

    def __init__(self):
        self.jars: dict[str, list[dict]] = defaultdict(list)
        self.lock = threading.Lock()

    def resume(self, slug: str, browser: Browser) -> bool:
        with self.lock:
            if not self.jars[slug]:
                return False
            browser.cookies = self.jars[slug].pop()
            return True

    def leave(self, slug: str, browser: Browser) -> None:
        with self.lock:
            self.jars[slug].append(browser.cookies)


WAITING = Waiting()


HTMX = {"HX-Request": "true"}  # what htmx sends with each request
BOOSTED = {**HTMX, "HX-Boosted": "true"}  # and with the task form's answer: htmx boosts that form
ONE_TRIP = "survey 1-trip"  # the survey phase as a browser with JavaScript loops
PAGE_WAIT = "answer→page"  # from an answer's POST to the next page received (one trip or two)


def survey_user(
    port: int,
    slug: str,
    stats: Stats,
    budget: Budget,
    think: float,
    rng: random.Random,
    one_trip: bool = False,
) -> None:
    """Participants one after another: study link, consent, then pages until done.
    ``one_trip``: as a browser with JavaScript answers (htmx's task form): the answer's POST
    carries ``HX-Request`` and its response is the next page, so a loop is one request after
    the first page's GET; else POST, redirect, GET (a browser without JavaScript)."""
    browser = None
    if think:  # paced participants arrive spread over one page's time, not all at once
        time.sleep(rng.uniform(0, think))
    try:
        while True:
            browser = Browser(port, stats, budget)
            if not WAITING.resume(slug, browser):
                browser.call("enter", "GET", f"/s/{slug}/")
                _, page, _, _ = browser.call("consent_get", "GET", f"/s/{slug}/consent/")
                token = CSRF_FIELD.search(page)
                if token is None:  # no consent form: the study is full or closed
                    return
                browser.call(
                    "consent_post", "POST", f"/s/{slug}/consent/", {"csrfmiddlewaretoken": token.group(1)}
                )
            status, page, location, _ = browser.call("fetch", "GET", f"/s/{slug}/task/")
            while True:
                action = SUBMIT_ACTION.search(page) if status == 200 else None
                if action is None:
                    break  # done, or nothing left for this participant
                if think:
                    time.sleep(rng.uniform(0.5, 1.5) * think)
                form = {"csrfmiddlewaretoken": CSRF_FIELD.search(page).group(1), "label": "supports"}
                form["evidence"] = ["0"]
                asked = time.perf_counter()
                if one_trip:
                    status, page, location, _ = browser.call(
                        "submit+page", "POST", action.group(1), form, BOOSTED
                    )
                    confirmed = status == 200 and 'class="messages"' not in page
                else:
                    status, _, location, messages = browser.call("submit", "POST", action.group(1), form)
                    confirmed = status == 302 and not messages
                if confirmed and location.rstrip("/").endswith(("task", "done")):
                    with stats.lock:
                        stats.successes += 1
                if not one_trip:
                    status, page, location, _ = browser.call("fetch", "GET", f"/s/{slug}/task/")
                stats.wait(time.perf_counter() - asked)
            browser = None
    except TimeoutError:
        if browser is not None and "sessionid" in browser.cookies:
            WAITING.leave(slug, browser)


def game_player(port: int, slug: str, stats: Stats, budget: Budget, rng: random.Random) -> None:
    """Players one after another: start the category, then rounds with a random stop."""
    htmx = HTMX
    browser = None
    try:
        while True:
            browser = Browser(port, stats, budget)
            if not WAITING.resume(slug, browser):
                _, landing, _, _ = browser.call("landing", "GET", "/play/")
                token = CSRF_FIELD.search(landing).group(1)
                browser.call("start", "POST", f"/play/s/{slug}/", {"csrfmiddlewaretoken": token})
            while True:
                status, page, _, _ = browser.call("round_get", "GET", f"/s/{slug}/task/")
                match = ROUND.search(page) if status == 200 else None
                if match is None:
                    break
                base = f"/s/{slug}/a/{match.group(1)}/boundary"
                shown = SEEN.search(page)  # a resumed round may have sentences shown already
                if shown is not None:
                    first = int(shown.group(1))
                    stop = rng.randint(first, SENTENCES - 1)  # reveal up to here, then mark the newest
                    for seen in range(first, stop + 1):
                        browser.call("reveal", "POST", f"{base}/reveal/", {"seen": seen}, htmx, expect=(200,))
                    browser.call("guess", "POST", f"{base}/guess/", {"guess": stop}, htmx, expect=(200,))
                elif "reason-form" not in page:  # resumed with every sentence shown: mark the last
                    guess = {"guess": SENTENCES - 1}
                    browser.call("guess", "POST", f"{base}/guess/", guess, htmx, expect=(200,))
                status, _, _, _ = browser.call(
                    "answer", "POST", f"{base}/answer/", {"reason": "It drifts."}, htmx, expect=(200,)
                )
                if status == 200:
                    with stats.lock:
                        stats.successes += 1
            browser = None
    except TimeoutError:
        if browser is not None and "sessionid" in browser.cookies:
            WAITING.leave(slug, browser)


def anchor_user(port: int, path: str, stats: Stats, budget: Budget, step: str) -> None:
    browser = Browser(port, stats, budget)
    try:
        while True:
            browser.call(step, "GET", path)
    except TimeoutError:
        return


def run_phase(
    target, users: int, seconds: float, max_requests: int, make_args, settle: float = 0.0
) -> tuple[Stats, float]:
    """``users`` threads of ``target(*make_args(user, stats, budget))`` under one budget;
    latencies of the first ``settle`` seconds are not kept (request counts are)."""
    stats, budget = Stats(measure_from=time.monotonic() + settle), Budget(seconds, max_requests)
    threads = [
        threading.Thread(target=target, args=make_args(user, stats, budget), daemon=True)
        for user in range(users)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return stats, time.perf_counter() - started


# --- where the CPU goes ----------------------------------------------------------------------

TICKS = os.sysconf("SC_CLK_TCK")
PROCESS_CLASSES = ("client", "gunicorn", "Redis", "PostgreSQL+rest")
REST = PROCESS_CLASSES[-1]


def _process_cpu(stat: str) -> tuple[str, int, float]:
    """(command name, process group, CPU seconds so far) from a /proc/<pid>/stat line."""
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()  # from field 3 (state) on
    return name, int(fields[2]), (int(fields[11]) + int(fields[12])) / TICKS


def _machine_busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (user, nice, system, irq, softirq)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = (int(value) for value in fields[:7])
    return (user + nice + system + irq + softirq) / TICKS


def cpu_by_process_class(server_group: int) -> dict[str, float]:
    """CPU seconds used so far by this client, the server's process group (gunicorn's master
    and workers) and Redis, and by everything else on the machine (PostgreSQL, whose
    backends come and go with their connections, and the kernel's network work): read
    before and after a phase, the difference says which side a request's cost falls on.
    Linux only; on a quiet machine."""
    busy = _machine_busy_seconds()
    used = dict.fromkeys(PROCESS_CLASSES, 0.0)
    times = os.times()
    used["client"] = times.user + times.system
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            name, group, seconds = _process_cpu((entry / "stat").read_text())
        except (OSError, ValueError):  # gone meanwhile
            continue
        if group == server_group:
            used["gunicorn"] += seconds
        elif name.startswith("redis-server"):
            used["Redis"] += seconds
    used[REST] = busy - sum(used.values())
    return used


def report_cpu(before: dict[str, float], after: dict[str, float], requests: int) -> dict[str, float]:
    """Print and return the CPU milliseconds per request of each process class in a phase."""
    per_request = {key: 1000 * (after[key] - before[key]) / max(1, requests) for key in PROCESS_CLASSES}
    total = sum(per_request.values())
    parts = ", ".join(f"{key} {value:.2f}" for key, value in per_request.items())
    print(f"  CPU per request: {total:.2f} ms ({parts})")
    return per_request


# --- rows read and written ---------------------------------------------------------------------

# pg_stat_database's counters: rows (and index entries) the scans returned, rows fetched
# through an index, and the rows written.
ROW_COUNTERS = ("tup_returned", "tup_fetched", "tup_inserted", "tup_updated", "tup_deleted")


class RowCounters:
    """The bench database's row counters, read on a connection of its own that stays open
    for the run (its catalog caches warm), outside any transaction.

    A PostgreSQL backend (15+) sends its counts at the end of a transaction at most once a
    second, and once it has been idle for ten seconds, so a phase's last requests are
    counted only after ``settle`` seconds. The list of tables and indexes is a query over
    the catalogs (``pg_stat_user_indexes`` joins ``pg_class``): some 2,700 catalog rows that
    ``tup_returned`` counts too, which fell in the next phase's window and, spread over its
    loops, added 2 to 5 rows per loop (500 to 1,300 loops) that no participant read. So each
    reading takes the database's counters twice, before that query and after it (its own
    reads sent first): a phase runs from one reading's second to the next reading's first."""

    def __init__(self, url: str):
        import psycopg

        self.connection = psycopg.connect(url, autocommit=True)

    def read(self, settle: float) -> tuple[dict[str, int], dict[str, int]]:
        """(the counters before this reading's own reads, the counters after them); the
        reads per table and index (``read from …``) in both."""
        time.sleep(settle)
        first = self._database_counters()
        # Where the reads fall: rows scanned per table, entries read per index.
        places = self.connection.execute(
            "SELECT relname, seq_tup_read FROM pg_stat_user_tables "
            "UNION ALL SELECT indexrelname, idx_tup_read FROM pg_stat_user_indexes"
        ).fetchall()
        first.update({f"read from {name}": value for name, value in places})
        last = self._database_counters()
        last.update({f"read from {name}": value for name, value in places})
        return first, last

    def _database_counters(self) -> dict[str, int]:
        # Sent when this backend is next idle, that is before the next statement is read.
        self.connection.execute("SELECT pg_stat_force_next_flush()")
        self.connection.execute("SELECT pg_stat_clear_snapshot()")
        row = self.connection.execute(
            f"SELECT {', '.join(ROW_COUNTERS)} FROM pg_stat_database WHERE datname = current_database()"  # noqa: S608 - constant columns
        ).fetchone()
        return dict(zip(ROW_COUNTERS, row, strict=True))

    def close(self) -> None:
        self.connection.close()


def report_rows(before: dict[str, int], after: dict[str, int], loops: int) -> dict[str, float]:
    """Print and return the rows read and written per loop: read = rows and index entries
    returned by scans (``tup_returned``, each foreign-key check's look-up included),
    ``fetched`` the table rows reached through an index on the way; then where the reads
    fell, per table and index, and the rest: PostgreSQL's own catalogs, read by a server
    process that plans its statements again (a new connection, or its caches cleared when
    others change schemas on the same server: a test run's migrations)."""
    per_loop = {key: (after[key] - before[key]) / max(1, loops) for key in ROW_COUNTERS}
    print(
        f"  rows per loop: read {per_loop['tup_returned']:.1f} "
        f"(fetched by index {per_loop['tup_fetched']:.1f}), "
        f"inserted {per_loop['tup_inserted']:.1f}, updated {per_loop['tup_updated']:.1f}, "
        f"deleted {per_loop['tup_deleted']:.1f} ({loops} loops)"
    )
    places = [key for key in after if key.startswith("read from ")]
    most = sorted(
        ((key, (after[key] - before.get(key, 0)) / max(1, loops)) for key in places), key=lambda p: -p[1]
    )
    catalogs = per_loop["tup_returned"] - sum(value for _, value in most)
    print(
        "    "
        + ", ".join(f"{name[10:]} {value:.1f}" for name, value in most if value >= 0.05)
        + f"; PostgreSQL's catalogs {catalogs:.1f}"
    )
    return per_loop


# --- the data -------------------------------------------------------------------------------


def claim_items(count: int) -> list[dict]:
    return [
        {
            "external_id": f"c{n}",
            "payload": {"claim": f"Claim {n} holds.", "sentences": ["One.", "Two.", "Three."]},
            "gold": {"label": "supports", "evidence": [0]},
        }
        for n in range(count)
    ]


def make_survey(slug: str, items: int, per_session: int, per_item: int, config: dict | None = None) -> None:
    """A live claim study with ``per_item`` answers wanted per item (room for every page a
    phase can ask for: a study that fills up mid-phase turns participants away); past the
    first thousand, items are added in bulk (same rows). ``config``: the study's (e.g. the
    adaptive assignment's options)."""
    from annotation.models import Item
    from annotation.services.authoring.studies import load_study_file

    data = {
        "slug": slug,
        "title": f"Load {slug}",
        "kind": "claim",
        "status": "live",
        "instructions": "Label the claim.",
        "annotations_per_item": per_item,
        "items_per_session": per_session,
        "completion_code": "LOAD-DONE",
        "screenout_code": "LOAD-OUT",
        "config": config or {},
        "items": claim_items(min(items, 1000)),
    }
    study = load_study_file(data).study
    template = Item.objects.filter(study=study).first()
    for start in range(1000, items, 20000):
        Item.objects.bulk_create(
            (
                Item(study=study, external_id=f"c{n}", payload=template.payload, gold=template.gold)
                for n in range(start, min(start + 20000, items))
            ),
            batch_size=BULK_BATCH,
        )


def make_history(slug: str, people: int, pages: int) -> None:
    """A finished study of ``people`` participants who answered ``pages`` pages each: the
    participant, enrollment and assignment tables of a site that has run studies before.
    On a fresh database those tables would hold a few hundred rows, which PostgreSQL reads
    whole rather than through an index, and the rows read per loop would say nothing about
    a deployment. Once per database (the run's studies are checked, this one is not)."""
    from django.utils import timezone

    from annotation.models import Assignment, Enrollment, Item, Participant, Study

    if Study.objects.filter(slug=slug).exists():
        return
    make_survey(slug, 1000, pages, people)
    study = Study.objects.get(slug=slug)
    items = list(Item.objects.filter(study=study).values_list("pk", flat=True))
    now = timezone.now()
    made = Participant.objects.bulk_create((Participant() for _ in range(people)), batch_size=BULK_BATCH)
    people_ids = [person.pk for person in made]
    enrolled = Enrollment(study=study, status=Enrollment.Status.COMPLETED, answered_count=pages)
    copy_rows_like(enrolled, ("participant_id",), ((person,) for person in people_ids))
    answered = Assignment(
        study=study, status=Assignment.Status.ANSWERED, assigned_at=now, expires_at=now, answered_at=now
    )
    copy_rows_like(
        answered,
        ("participant_id", "item_id", "position"),
        (
            (person, items[(n * pages + position) % len(items)], position + 1)
            for n, person in enumerate(people_ids)
            for position in range(pages)
        ),
    )


def make_game(slug: str, items: int) -> None:
    from annotation.services.authoring.studies import load_study_file

    rng = random.Random(slug)
    data = {
        "slug": slug,
        "title": f"Load {slug}",
        "kind": "boundary",
        "status": "live",
        "public": True,
        "annotations_per_item": 3,
        "items_per_session": 1000,
        "completion_code": "LOAD-DONE",
        "screenout_code": "LOAD-OUT",
        "items": [
            {
                "external_id": f"p{n}",
                "payload": {
                    "sentences": [f"Passage {n}, sentence {i}, in plain words." for i in range(SENTENCES)],
                    "boundary": rng.randint(1, SENTENCES),
                    "category": slug,
                    "model": "bench",
                    "p": 0.4,
                },
            }
            for n in range(items)
        ],
    }
    load_study_file(data)


def make_anchor_table() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_anchor")
        cursor.execute("CREATE TABLE bench_anchor (id integer PRIMARY KEY, n bigint NOT NULL DEFAULT 0)")
        cursor.execute("INSERT INTO bench_anchor (id) SELECT generate_series(0, %s)", [ANCHOR_ROWS])


def check_database(slug: str, successes: int) -> dict[str, int]:
    """The invariants after the load: none of them may be broken by concurrency."""
    from django.db import connection

    checks = {
        "items over target (responses)": """
            SELECT count(*) FROM (SELECT r.item_id FROM annotation_response r JOIN annotation_study s
            ON s.id = r.study_id WHERE s.slug = %(slug)s GROUP BY r.item_id, s.annotations_per_item
            HAVING count(*) > s.annotations_per_item) t""",
        "items over target (live pages)": """
            SELECT count(*) FROM (SELECT a.item_id FROM annotation_assignment a JOIN annotation_study s
            ON s.id = a.study_id WHERE s.slug = %(slug)s AND a.status IN ('assigned', 'answered')
            GROUP BY a.item_id, s.annotations_per_item HAVING count(*) > s.annotations_per_item) t""",
        "slots_taken off its live pages": """
            SELECT count(*) FROM annotation_item i JOIN annotation_study s ON s.id = i.study_id
            WHERE s.slug = %(slug)s AND i.slots_taken <> (SELECT count(*) FROM annotation_assignment a
            WHERE a.item_id = i.id AND a.status IN ('assigned', 'answered'))""",
        "repeated participant-item pairs": """
            SELECT count(*) FROM (SELECT a.participant_id, a.item_id FROM annotation_assignment a
            JOIN annotation_study s ON s.id = a.study_id WHERE s.slug = %(slug)s
            GROUP BY a.participant_id, a.item_id HAVING count(*) > 1) t""",
        "response rows": """
            SELECT count(*) FROM annotation_response r JOIN annotation_study s ON s.id = r.study_id
            WHERE s.slug = %(slug)s""",
    }
    found = {}
    with connection.cursor() as cursor:
        for name, sql in checks.items():
            cursor.execute(sql, {"slug": slug})
            found[name] = cursor.fetchone()[0]
    found["success replies"] = successes
    return found


# --- the report ------------------------------------------------------------------------------


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000 if ordered else float("nan")


def report(name: str, stats: Stats, seconds: float) -> float:
    rate = stats.requests / seconds
    print(f"\n{name}: {stats.requests} requests in {seconds:.1f} s = {rate:.1f} req/s")
    for step, values in stats.latencies.items():
        failed = stats.failures.get(step, 0)
        print(
            f"  {step:<13} {len(values):>6}  p50 {percentile(values, 0.5):7.1f} ms  "
            f"p99 {percentile(values, 0.99):7.1f} ms" + (f"  failed {failed}" if failed else "")
        )
    return rate


def print_cpu_table(cpu: dict[str, list[dict[str, float]]]) -> None:
    """CPU milliseconds per request by process class, each phase kind's first run (the
    anchors: their best), and how many times the hello-world's (the anchors' best phase)."""
    if not cpu.get("hello"):
        return
    hello = min(cpu["hello"], key=lambda parts: sum(parts.values()))
    print("\nCPU ms per request (all cores), by process class; x: times the hello-world's:")
    print("  " + f"{'':<14}" + "".join(f"{key:>18}" for key in (*PROCESS_CLASSES, "total")))
    for name, runs in cpu.items():
        parts = min(runs, key=lambda p: sum(p.values())) if name in ("hello", "locked") else runs[0]
        cells = [(parts[key], hello[key]) for key in PROCESS_CLASSES]
        cells.append((sum(parts.values()), sum(hello.values())))
        row = "".join(f"{value:9.2f} ({value / base if base else math.nan:4.1f}x)" for value, base in cells)
        print(f"  {name:<14}{row}")


def per_loop(stats: Stats, cpu_per_request: dict[str, float]) -> dict[str, float]:
    """A survey phase per loop (a page answered and the next one received): its requests,
    the server's CPU (gunicorn's processes) and the rest's, and the participant's wait."""
    loops = max(stats.successes, 1)
    requests = stats.requests / loops
    waits = stats.latencies.get(PAGE_WAIT, [])
    return {
        "requests/loop": requests,
        "server CPU ms/loop": cpu_per_request["gunicorn"] * requests,
        "PostgreSQL+rest ms/loop": cpu_per_request[REST] * requests,
        "p50 ms/page": percentile(waits, 0.5),
        "p99 ms/page": percentile(waits, 0.99),
        "loops": float(stats.successes),
    }


def print_loop_table(loops: list[tuple[str, dict[str, float]]]) -> None:
    """Every survey phase of the run in its order, per loop: classic (POST, redirect, GET)
    beside one-trip (the answer's response is the next page)."""
    if not loops:
        return
    keys = list(loops[0][1])
    print("\nsurvey loops (answer → next page), each phase in run order:")
    print("  " + f"{'':<16}" + "".join(f"{key:>25}" for key in keys))
    for name, figures in loops:
        print(f"  {name:<16}" + "".join(f"{figures[key]:25.2f}" for key in keys))


def print_rows_table(rows: dict[str, dict[str, float]]) -> None:
    """Rows PostgreSQL read and wrote per survey loop (a page fetched and answered; the
    entry and consent of new participants spread over their pages)."""
    if not rows:
        return
    print("\nPostgreSQL rows per survey loop (pg_stat_database):")
    print("  " + f"{'':<14}" + "".join(f"{key:>14}" for key in ROW_COUNTERS))
    for name, per_loop in rows.items():
        print(f"  {name:<14}" + "".join(f"{per_loop[key]:14.1f}" for key in ROW_COUNTERS))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (compose: 3)")
    parser.add_argument("--duration", type=float, default=20, help="seconds per closed-loop phase")
    parser.add_argument("--max-requests", type=int, default=20000, help="requests per phase at most")
    parser.add_argument("--paced", type=float, default=40, help="seconds of paced participants (0: skip)")
    parser.add_argument("--think", type=float, default=5, help="seconds per page when paced")
    parser.add_argument("--small-items", type=int, default=1000)
    parser.add_argument("--big-items", type=int, default=100000, help="0: skip the study-size comparison")
    parser.add_argument("--warmup", type=float, default=8, help="unmeasured seconds before the phases")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--survey-items", type=int, default=5000, help="items of the survey study")
    parser.add_argument(
        "--assignment",
        choices=["uniform", "adaptive"],
        default="uniform",
        help="the survey study's assignment (adaptive: min_answers 2; with few --survey-items most "
        "pages come from the adaptive scan)",
    )
    parser.add_argument(
        "--one-trip-rounds",
        type=int,
        default=1,
        help="survey phases as classic (POST, redirect, GET) then one-trip (htmx's POST returning "
        "the next page), alternated this many times",
    )
    parser.add_argument(
        "--history", type=int, default=20000, help="participants of an earlier study (tables of a used site)"
    )
    parser.add_argument(
        "--stats-settle",
        type=float,
        default=11,
        help="seconds to wait before reading PostgreSQL's row counters (sent after 10 s idle)",
    )
    parser.add_argument(
        "--server-root",
        default=str(ROOT),
        help="checkout the server runs from (for a before/after: another version with the anchor views)",
    )
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a scratch PostgreSQL database.")
    ensure_database(url)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    run = f"{int(time.time()) % 100000}"
    survey, game, small, big = (f"load-{name}-{run}" for name in ("survey", "game", "small", "big"))
    print(f"Building the studies (run {run}) ...", flush=True)
    adaptive = {"assignment": "adaptive", "adaptive": {"min_answers": 2}}
    make_survey(survey, args.survey_items, 20, 10, adaptive if args.assignment == "adaptive" else None)
    make_game(game, 2000)
    sizes = {}
    if args.big_items:  # the same answers wanted per item: the studies differ in size alone
        make_survey(small, args.small_items, 20, 30)
        make_survey(big, args.big_items, 20, 30)
        sizes = {small: args.small_items, big: args.big_items}
    make_anchor_table()
    make_history("load-history", args.history, 10)
    connection.close()

    port = free_port()
    counters = RowCounters(url)
    server = start_server(port, args.workers, Path(args.server_root))
    rng = random.Random(args.seed)
    successes: dict[str, int] = defaultdict(int)
    rates: dict[str, list[float]] = defaultdict(list)
    rounds: list[float] = []
    cpu: dict[str, list[dict[str, float]]] = defaultdict(list)
    rows: dict[str, dict[str, float]] = {}  # survey phases: rows read and written per loop

    def survey_args(slug, think, one_trip=False):
        return lambda user, stats, budget: (
            port,
            slug,
            stats,
            budget,
            think,
            random.Random(rng.random()),
            one_trip,
        )

    def anchor_args(path, step):
        return lambda user, stats, budget: (port, path.format(row=user), stats, budget, step)

    loops: list[tuple[str, dict[str, float]]] = []  # survey phases: the figures per loop
    surveys = [
        ("survey", survey_user, survey_args(survey, 0), survey),
        (ONE_TRIP, survey_user, survey_args(survey, 0, one_trip=True), survey),
    ]
    phases = [
        *surveys * max(args.one_trip_rounds, 1),
        ("hello", anchor_user, anchor_args("/bench/hello", "hello"), None),
        ("locked", anchor_user, anchor_args("/bench/locked-write/{row}", "locked"), None),
        (
            "game",
            game_player,
            lambda user, stats, budget: (port, game, stats, budget, random.Random(user)),
            game,
        ),
        ("hello", anchor_user, anchor_args("/bench/hello", "hello"), None),
        ("locked", anchor_user, anchor_args("/bench/locked-write/{row}", "locked"), None),
    ]
    try:
        if args.warmup:  # first requests of each worker load templates and code: not measured
            kinds = list({phase[0]: phase for phase in phases}.values())
            for _, target, make_args, slug in kinds:
                stats, _ = run_phase(
                    target, args.users, args.warmup / len(kinds), args.max_requests, make_args
                )
                if slug:
                    successes[slug] += stats.successes
        # Statistics of the tables as they are now (on a fresh database, PostgreSQL would
        # plan for the empty tables it saw last and scan them whole).
        settle_tables()
        for name, target, make_args, slug in phases:
            counted = name in (surveys[0][0], surveys[1][0]) and name not in rows
            rows_before = counters.read(args.stats_settle)[1] if counted else {}
            before = cpu_by_process_class(server.pid)
            stats, seconds = run_phase(target, args.users, args.duration, args.max_requests, make_args)
            rates[name].append(report(name, stats, seconds))
            cpu[name].append(report_cpu(before, cpu_by_process_class(server.pid), stats.requests))
            if counted:
                rows[name] = report_rows(rows_before, counters.read(args.stats_settle)[0], stats.successes)
            if slug == survey:
                loops.append((name, per_loop(stats, cpu[name][-1])))
            if name == "game":  # the figure: rounds finished (answers confirmed) per second
                rounds.append(stats.successes / seconds)
                print(f"  rounds        {stats.successes:>6}  = {rounds[-1]:.1f} rounds/s")
            if slug:
                successes[slug] += stats.successes
        if args.paced:
            paced = survey_args(survey, args.think)
            settle = 2 * args.think  # arrivals and their entry pages: reported in the counts only
            stats, seconds = run_phase(survey_user, args.users, args.paced, args.max_requests, paced, settle)
            report(
                f"paced survey ({args.think:g} s per page; latencies after the first {settle:g} s)",
                stats,
                seconds,
            )
            successes[survey] += stats.successes
        size_rates = {}
        rows_before = counters.read(args.stats_settle)[1] if sizes else {}
        for slug, items in sizes.items():
            before = cpu_by_process_class(server.pid)
            stats, seconds = run_phase(
                survey_user, args.users, args.duration, args.max_requests, survey_args(slug, 0)
            )
            size_rates[items] = report(f"survey on {items:,} items", stats, seconds)
            after = cpu_by_process_class(server.pid)
            cpu[f"{items:,} items"].append(report_cpu(before, after, stats.requests))
            rows_after, rows_next = counters.read(args.stats_settle)
            rows[f"{items:,} items"] = report_rows(rows_before, rows_after, stats.successes)
            rows_before = rows_next
            successes[slug] += stats.successes
    finally:
        stop_server(server)
        counters.close()

    hello, locked = max(rates["hello"]), max(rates["locked"])
    print("\nratios (best anchor phase of the run):")
    for name in ("survey", "game"):
        rate = rates[name][0]
        print(
            f"  {name:<7} {rate:7.1f} req/s = {rate / hello:6.1%} of hello ({hello:.0f}), "
            f"{rate / locked:6.1%} of the locked write ({locked:.0f})"
            + (f"; {rounds[0]:.1f} rounds/s" if name == "game" and rounds else "")
        )
    for items, rate in size_rates.items():
        print(f"  survey on {items:,} items {rate:7.1f} req/s = {rate / hello:6.1%} of hello")
    if size_rates:
        few, many = size_rates[args.small_items], size_rates[args.big_items]
        print(
            f"  study size: {args.big_items:,} items run at {many / few:.0%} "
            f"of the {args.small_items:,}-item study's rate"
        )
    print_cpu_table(cpu)
    print_rows_table(rows)
    print_loop_table(loops)

    print("\ndatabase checks:")
    broken = False
    for slug in (survey, game, *sizes):
        found = check_database(slug, successes[slug])
        bad = {
            key: value for key, value in found.items() if "over" in key or "repeated" in key or "off" in key
        }
        lost = found["response rows"] != found["success replies"]
        broken |= any(bad.values()) or lost
        print(
            f"  {slug}: "
            + ", ".join(f"{key} {value}" for key, value in found.items())
            + ("  <-- BROKEN" if any(bad.values()) or lost else "  ok")
        )
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_anchor")
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
