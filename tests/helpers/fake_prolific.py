"""A small stand-in for Prolific's public API, served by the test on its own port.

It follows the published API where our client touches it: the paths and methods, the
``Authorization: Token …`` header (401 otherwise), 201 on creation, 400 for a bad body (a
rejection without ``rejection_category`` or with a message under 100 characters, a transition
of a submission not awaiting review, a bonus for someone who did not take part), 404 for an
unknown id, paginated listings with ``_links.next.href``; and it can fail on purpose between
creating a bulk bonus and paying it (``pay_failure``). A race test can hold the POSTs to
some paths (``hold``) unanswered until it sets ``release``, to see what a second run does
while the first one's call is out.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TOKEN = "fake-prolific-token"
PAGE_SIZE = 2
# Seconds ``serve_forever`` sleeps between looks at its shutdown flag: ``server.shutdown()``
# waits up to this long. The standard library's 0.5 s cost every test using the fake half a
# second at teardown; requests are answered at once either way (the loop selects on the socket).
POLL_INTERVAL_S = 0.05


@dataclass
class FakeProlific:
    url: str = ""
    studies: dict[str, dict] = field(default_factory=dict)
    submissions: list[dict] = field(default_factory=list)  # {id, study_id, participant_id, status}
    transitions: list[tuple[str, dict]] = field(default_factory=list)  # (submission id, body) accepted
    bonuses: dict[str, dict] = field(default_factory=dict)
    payments: list[str] = field(default_factory=list)  # bulk bonus ids paid, once per pay call that paid
    calls: list[tuple[str, str]] = field(default_factory=list)  # (method, path) of every request
    # None; "drop_after_paying": pay, then close the connection unanswered; "503": do not pay, answer
    # 503; "400": do not pay, answer 400 (say, the balance is too low). Each happens once.
    pay_failure: str | None = None
    ids: itertools.count = field(default_factory=lambda: itertools.count(1))
    # POSTs to a path for which ``hold`` says yes wait (at most a minute) for ``release``.
    hold: Callable[[str], bool] | None = None
    release: threading.Event = field(default_factory=threading.Event)

    def posts_to(self, path_part: str) -> int:
        """How many POSTs whose path contains ``path_part`` arrived (answered or held)."""
        return sum(1 for method, path in self.calls if method == "POST" and path_part in path)

    def add_submission(self, study_id: str, participant_id: str, status: str = "AWAITING REVIEW") -> str:
        submission_id = f"sub-{next(self.ids)}"
        self.submissions.append(
            {"id": submission_id, "study_id": study_id, "participant_id": participant_id, "status": status}
        )
        return submission_id

    def status_of(self, participant_id: str) -> str:
        return next(s["status"] for s in self.submissions if s["participant_id"] == participant_id)


def serve() -> tuple[FakeProlific, ThreadingHTTPServer]:
    """Start a fake on a free local port (its own thread); ``server.shutdown()`` stops it."""
    fake = FakeProlific()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet: a test that prints fails
            pass

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def _route(self, method: str) -> None:
            parts = urlsplit(self.path)
            fake.calls.append((method, parts.path))
            if method == "POST" and fake.hold is not None and fake.hold(parts.path):
                fake.release.wait(timeout=60)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.headers.get("Authorization") != f"Token {TOKEN}":
                return self._reply(401, {"error": {"detail": "Invalid token."}})
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return self._reply(400, {"error": {"detail": "Not JSON."}})
            segments = [s for s in parts.path.split("/") if s]
            query = parse_qs(parts.query)
            if method == "GET" and segments == ["api", "v1", "submissions"]:
                return self._list_submissions(query)
            if method != "POST":
                return self._reply(405, {"error": {"detail": "Method not allowed."}})
            if segments == ["api", "v1", "studies"]:
                return self._create_study(body)
            if segments[:3] == ["api", "v1", "studies"] and segments[4:] == ["transition"]:
                return self._transition_study(segments[3], body)
            if segments == ["api", "v1", "submissions", "bonus-payments"]:
                return self._create_bonus(body)
            if segments[:3] == ["api", "v1", "submissions"] and segments[4:] == ["transition"]:
                return self._transition_submission(segments[3], body)
            if segments[:3] == ["api", "v1", "bulk-bonus-payments"] and segments[4:] == ["pay"]:
                return self._pay(segments[3])
            return self._reply(404, {"error": {"detail": "Not found."}})

        def _create_study(self, body: dict) -> None:
            required = [
                "name",
                "external_study_url",
                "completion_codes",
                "estimated_completion_time",
                "reward",
                "total_available_places",
            ]
            missing = [name for name in required if not body.get(name)]
            if missing:
                return self._reply(
                    400, {"error": {"detail": {name: ["This field is required."] for name in missing}}}
                )
            study_id = f"st{next(fake.ids):022d}"
            fake.studies[study_id] = {**body, "id": study_id, "status": "UNPUBLISHED"}
            self._reply(201, fake.studies[study_id])

        def _transition_study(self, study_id: str, body: dict) -> None:
            study = fake.studies.get(study_id)
            if study is None:
                return self._reply(404, {"error": {"detail": "Study not found."}})
            if body.get("action") != "PUBLISH" or study["status"] != "UNPUBLISHED":
                return self._reply(400, {"error": {"detail": "Invalid transition."}})
            study["status"] = "ACTIVE"
            self._reply(200, study)

        def _list_submissions(self, query: dict) -> None:
            study_id = query.get("study", [""])[0]
            page = int(query.get("page", ["1"])[0])
            rows = [s for s in fake.submissions if s["study_id"] == study_id]
            chunk = rows[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
            more = page * PAGE_SIZE < len(rows)
            next_link = f"{fake.url}/api/v1/submissions/?study={study_id}&page={page + 1}" if more else None
            self._reply(
                200, {"results": chunk, "_links": {"next": {"href": next_link}}, "meta": {"count": len(rows)}}
            )

        def _transition_submission(self, submission_id: str, body: dict) -> None:
            submission = next((s for s in fake.submissions if s["id"] == submission_id), None)
            if submission is None:
                return self._reply(404, {"error": {"detail": "Submission not found."}})
            if submission["status"] != "AWAITING REVIEW":
                return self._reply(400, {"error": {"detail": f"Submission is {submission['status']}."}})
            action = body.get("action")
            if action == "REJECT":
                if not body.get("rejection_category"):
                    return self._reply(400, {"error": {"detail": {"rejection_category": ["Required."]}}})
                if len(body.get("message") or "") < 100:
                    return self._reply(400, {"error": {"detail": {"message": ["At least 100 characters."]}}})
            elif action != "APPROVE":
                return self._reply(400, {"error": {"detail": "Unknown action."}})
            submission["status"] = "APPROVED" if action == "APPROVE" else "REJECTED"
            fake.transitions.append((submission_id, body))
            self._reply(200, submission)

        def _create_bonus(self, body: dict) -> None:
            study_id = body.get("study_id", "")
            took_part = {s["participant_id"] for s in fake.submissions if s["study_id"] == study_id}
            lines = [line.split(",") for line in (body.get("csv_bonuses") or "").strip().splitlines()]
            wrong = [line[0] for line in lines if len(line) != 2 or line[0] not in took_part]
            if not lines or wrong:
                return self._reply(400, {"error": {"detail": f"Invalid participant ids: {wrong}"}})
            cents = round(sum(float(line[1]) for line in lines) * 100)
            bonus_id = f"bb{next(fake.ids)}"
            fake.bonuses[bonus_id] = {"id": bonus_id, "study": study_id, "amount": cents, "fees": cents // 3}
            self._reply(201, {**fake.bonuses[bonus_id], "total_amount": cents + cents // 3})

        def _pay(self, bonus_id: str) -> None:
            if bonus_id not in fake.bonuses:
                return self._reply(404, {"error": {"detail": "Bulk bonus payment not found."}})
            if fake.pay_failure in ("503", "400"):
                status, fake.pay_failure = int(fake.pay_failure), None
                return self._reply(status, {"error": {"detail": "Not paid."}})
            fake.payments.append(bonus_id)  # not idempotent: every call pays
            if fake.pay_failure == "drop_after_paying":
                fake.pay_failure = None
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return None
            self._reply(202, {})

        def _reply(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(
        target=server.serve_forever, args=(POLL_INTERVAL_S,), name="fake-prolific", daemon=True
    ).start()
    return fake, server


def closed_port_url() -> str:
    """An address where nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
