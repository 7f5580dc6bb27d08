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
