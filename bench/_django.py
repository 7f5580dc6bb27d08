"""Django for the benchmark scripts that run models in-process (no web server, no secrets)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup_django() -> None:
    """Django with this repository's settings, a throwaway key and the hub kept offline."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-not-a-secret")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()


def production_like_env(host: str) -> dict[str, str]:
    """Settings for serving the app under load as deployed (DEBUG off), with the two bench
    anchors on, over plain HTTP to ``host``, and without the per-address rate limits: every
    simulated participant comes from one address, where a real study sees one per person."""
    return {
        "DEBUG": "0",
        "BENCH_ANCHORS": "1",
        "ALLOWED_HOSTS": host,
        "LOG_LEVEL": "WARNING",
        "STATIC_MANIFEST": "0",
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "SECURE_HSTS_SECONDS": "0",
        "RATE_LIMIT_ENTRY": "100000000/min",
        "RATE_LIMIT_LOGIN": "100000000/min",
        "RATE_LIMIT_TOKEN": "100000000/min",
    }


@dataclass(frozen=True)
class CommandRun:
    """A ``manage.py`` command run in a child process: its wall seconds (Python and Django
    start-up included), CPU seconds, peak RSS in MiB, exit status and output."""

    seconds: float
    cpu_seconds: float
    peak_mib: float
    status: int
    output: str


def run_manage(*arguments: str) -> CommandRun:
    """``manage.py ARGUMENTS`` in a child process, measured by the kernel (``wait4``)."""
    command = [sys.executable, str(ROOT / "manage.py"), *arguments]
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=out)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        out.seek(0)
        text = out.read()
    return CommandRun(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, status, text)
