"""A local stand-in for an OpenAI-compatible endpoint, started by the tests (nothing reaches
the network): ``POST /v1/chat/completions`` and ``GET /v1/models`` on 127.0.0.1, a threaded
``http.server``.

The reply's text comes from ``answer(body) -> str`` (default: the first allowed answer the
prompt lists). Faults are scripted per chat request, first in first out, in ``faults``:
``"429"`` (with ``Retry-After: 0``), ``"500"``, ``"slow"`` (answers after ``slow_s``, past the
client's timeout), ``"malformed"`` (status 200, not JSON) and ``"refuse"`` (a refusal
message). Every chat request is counted and kept in ``requests`` (its body), faults included.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ALLOWED = re.compile(r"^Allowed answers: (.*)$", re.MULTILINE)


def first_allowed(body: dict) -> str:
    """The first allowed answer of the prompt's last question."""
    prompt = body["messages"][-1]["content"]
    listed = ALLOWED.findall(prompt)[-1]
    return listed.split(";")[0].split(" (")[0].strip()


def prompt_of(body: dict) -> str:
    return body["messages"][-1]["content"]


class StandIn:
    """Use as a context manager; ``url`` is the base URL a judge is given (``…/v1``)."""

    def __init__(self, answer: Callable[[dict], str] = first_allowed, *, slow_s: float = 0.3):
        self.answer = answer
        self.slow_s = slow_s
        self.faults: list[str] = []
        self.requests: list[dict] = []
        self.authorizations: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def count(self) -> int:
        return len(self.requests)

    def __enter__(self) -> StandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _next(self, body: dict) -> str:
        with self._lock:
            self.requests.append(body)
            return self.faults.pop(0) if self.faults else ""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):  # quiet: a test prints nothing
                pass

            def _send(self, status: int, payload: bytes, headers: dict | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (a timeout): nothing to answer
                    pass

            def do_GET(self):
                if self.path.rstrip("/") != "/v1/models":
                    return self._send(404, b'{"error": {"message": "not found"}}')
                models = {"object": "list", "data": [{"id": "standin-judge", "object": "model"}]}
                self._send(200, json.dumps(models).encode())

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, b'{"error": {"message": "not found"}}')
                body = json.loads(raw)
                standin.authorizations.append(self.headers.get("Authorization", ""))
                fault = standin._next(body)
                if fault == "429":
                    return self._send(429, b'{"error": {"message": "rate limited"}}', {"Retry-After": "0"})
                if fault == "500":
                    return self._send(500, b'{"error": {"message": "server error"}}')
                if fault == "malformed":
                    return self._send(200, b'{"choices": [ this is not json')
                if fault == "slow":
                    time.sleep(standin.slow_s)
                message = (
                    {"role": "assistant", "content": None, "refusal": "I cannot judge this."}
                    if fault == "refuse"
                    else {"role": "assistant", "content": standin.answer(body)}
                )
                reply = {
                    "id": f"chatcmpl-{len(standin.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": f"{body['model']}-2026-01-01",
                    "system_fingerprint": "fp_standin",
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                self._send(200, json.dumps(reply).encode())

        return Handler
