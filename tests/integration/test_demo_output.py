"""`make run` prints its own lines once: the demo's server (bin/run-demo's settings, the
development server with its autoreloader) starts without WhiteNoise's "No directory at:
…/staticfiles/" and says "Watching for file changes" once, not twice."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answered(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def demo_server_output(tmp_path: Path) -> str:
    """What the demo's server writes to stderr by the time it has answered a request for a
    static file (its handler, WhiteNoise included, is built by then). An empty SQLite file of
    its own (VAR_DIR); no broker, no PostgreSQL, as on a fresh clone."""
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env |= {"VAR_DIR": str(tmp_path), "SECRET_KEY": "demo-output-test-" + "k" * 40, "PYTHONWARNINGS": ""}
    for name in ("DEBUG", "STATIC_AUTOREFRESH", "STATIC_MANIFEST"):
        env.pop(name, None)
    port = free_port()
    serve = f'. bin/demo-env && exec "{sys.executable}" manage.py runserver 127.0.0.1:{port}'
    server = subprocess.Popen(
        ["bash", "-c", serve],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the autoreloader's child goes with it
    )
    try:
        deadline = time.monotonic() + 120
        while not answered(port):
            assert server.poll() is None and time.monotonic() < deadline, "the demo's server did not start"
            time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", port)) as http:
            http.sendall(b"GET /static/css/site.css HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            assert http.makefile("rb").readline().split()[1] == b"200"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        _, err = server.communicate(timeout=60)
    return err


def test_the_demo_server_starts_quietly(tmp_path):
    err = demo_server_output(tmp_path)
    assert "No directory at" not in err
    assert err.count("Watching for file changes") == 1, err
