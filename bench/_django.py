"""Django for the benchmark scripts that run models in-process (no web server, no secrets)."""

from __future__ import annotations

import os


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
