"""Helpers for the upload tests: a researcher on the upload page, row counts."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.models import Assignment, Enrollment, Item, Participant, Response, Study


def row_counts() -> dict[str, int]:
    """The rows any bad input must leave as they were."""
    models = (Study, Item, Participant, Enrollment, Assignment, Response)
    return {model.__name__: model.objects.count() for model in models}


def upload_page(client: Client, body: bytes | dict):
    """POST a study file to the upload page as a browser would."""
    content = json.dumps(body).encode() if isinstance(body, dict) else body
    return client.post("/research/studies/new/", {"study_file": SimpleUploadedFile("study.json", content)})


def error_cells(page) -> str:
    """The text of the upload page's error table."""
    html = page.content.decode()
    return html[html.index('id="upload-errors"') :] if 'id="upload-errors"' in html else ""
