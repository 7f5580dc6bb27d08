"""Static files under the test suite's settings (``STATIC_AUTOREFRESH=1``): WhiteNoise looks
each file up when it is asked for instead of listing them all whenever a test client starts
the app, and the files are still served, a file added after the start included."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.test import Client, override_settings

STATIC = Path(settings.BASE_DIR) / "static"


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_a_static_file_is_served_from_the_finders():
    assert settings.WHITENOISE_AUTOREFRESH
    response = Client().get("/static/js/builder.js")
    assert response.status_code == 200
    assert _body(response) == (STATIC / "js" / "builder.js").read_bytes()


def test_a_file_added_after_the_app_started_is_served(tmp_path):
    with override_settings(STATICFILES_DIRS=[*settings.STATICFILES_DIRS, tmp_path]):
        client = Client()
        assert client.get("/static/js/builder.js").status_code == 200  # the app has started
        (tmp_path / "added-after-start.js").write_text("// added\n")
        response = client.get("/static/added-after-start.js")
        assert response.status_code == 200
        assert _body(response) == b"// added\n"
