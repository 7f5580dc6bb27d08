"""Export speed: 1M responses to CSV through our exporter, against PostgreSQL's own COPY.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/roft_bench .venv/bin/python bench/export.py [--rows N]

Builds (once) a study with N responses in the database named by DATABASE_URL (created if
missing; use a scratch database), then exports it to CSV twice in one run: with
``manage.py exportstudy`` in a child process (wall time and peak RSS), and with
``COPY (the exporter's own SELECT) TO STDOUT WITH CSV`` through psycopg2. Prints rows/s,
peak RSS and the ratio. Both sides share the machine: on 2 shared cores the figures move
with whatever else runs, which is why the ratio is the number to compare.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only")
SLUG = "bench-export"
ITEMS = 1000
PER_PARTICIPANT = 100


def ensure_database(url: str) -> None:
    import psycopg2
    from psycopg2 import sql

    name = url.rsplit("/", 1)[1]
    admin = psycopg2.connect(url.rsplit("/", 1)[0] + "/postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if cursor.fetchone() is None:
            cursor.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    admin.close()


def build(rows: int) -> None:
    """A claim study with ITEMS items, rows/100 participants, 100 answered pages each."""
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Item, Response, Study

    call_command("migrate", verbosity=0)
    study = Study.objects.filter(slug=SLUG).first()
    if study is not None and Response.objects.filter(study=study).count() == rows:
        return
    Study.objects.filter(slug=SLUG).delete()
    study = Study.objects.create(slug=SLUG, title="Export bench", kind="claim", status="closed")
    Item.objects.bulk_create(
        Item(
            study=study,
            external_id=f"item-{n}",
            payload={
                "claim": f"Claim {n} holds.",
                "sentences": ["One.", "Two.", "Three."],
                "claim_type": "new",
            },
            provenance={"system": "ROME" if n % 2 else "FT_L", "source_id": f"case-{n // 2}", "seed": n},
        )
        for n in range(ITEMS)
    )
    people = rows // PER_PARTICIPANT
    with connection.cursor() as cursor:
        cursor.execute("SELECT min(id) FROM annotation_item WHERE study_id = %s", [study.pk])
        first_item = cursor.fetchone()[0]
        cursor.execute(
            "INSERT INTO annotation_participant (public_id, source, platform_worker_id, flagged, flag_reason,"
            " blocked, created_at) SELECT 'bench' || g, 'prolific', 'PID' || g, false, '', false, now()"
            " FROM generate_series(1, %s) g ON CONFLICT DO NOTHING",
            [people],
        )
        cursor.execute(
            "INSERT INTO annotation_enrollment (participant_id, study_id, status, platform_session,"
            " answered_count, points_total, attention_passed, attention_failed, excluded, created_at)"
            " SELECT id, %s, 'completed', '{}', %s, 0, 0, 0, false, now() FROM annotation_participant"
            " WHERE public_id LIKE 'bench%%'",
            [study.pk, PER_PARTICIPANT],
        )
        cursor.execute(
            "INSERT INTO annotation_assignment (study_id, item_id, participant_id, position, attempt, status,"
            " state, assigned_at, expires_at, shown_at, answered_at)"
            " SELECT %s, %s + ((p.n * 7 + k) %% %s), p.id, k + 1, 1, 'answered', '{}', now(), now(),"
            " now() - interval '30 seconds', now()"
            " FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM annotation_participant"
            "       WHERE public_id LIKE 'bench%%') p, generate_series(0, %s) k",
            [study.pk, first_item, ITEMS, PER_PARTICIPANT - 1],
        )
        cursor.execute(
            "INSERT INTO annotation_response (assignment_id, study_id, item_id, participant_id, answer,"
            " points, correct, score_details, display_order, is_attention_check, flagged, shown_at,"
            " answered_at, duration_seconds, imported, too_fast)"
            " SELECT a.id, a.study_id, a.item_id, a.participant_id,"
            " jsonb_build_object('label', 'supports', 'evidence', jsonb_build_array(a.position %% 3)),"
            " NULL, a.position %% 2 = 0, '{}', '{}', false, false, a.shown_at, a.answered_at, 30.0,"
            " false, false"
            " FROM annotation_assignment a WHERE a.study_id = %s",
            [study.pk],
        )
        cursor.execute("ANALYZE")


def time_exporter(path: Path) -> tuple[float, float, float]:
    """`manage.py exportstudy` in a child process: (seconds of the export itself, as the
    command reports it; seconds of the whole process, Python and Django start-up included;
    peak RSS in MiB)."""
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "manage.py"),
            "exportstudy",
            SLUG,
            "--format",
            "csv",
            "--output",
            str(path),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    export = float(re.search(r"in ([0-9.]+) s\.", done.stdout).group(1))
    return export, seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def time_copy(path: Path) -> float:
    """Seconds for PostgreSQL to COPY the exporter's own SELECT to a CSV file."""
    from django.db import connection

    from annotation.models import Study
    from annotation.services.export_rows import _dialect, _item_scalar_keys, _select

    study = Study.objects.get(slug=SLUG)
    payload, provenance = _item_scalar_keys(study)
    query, params = _select(_dialect(), study, ["label", "evidence"], payload, provenance)
    connection.ensure_connection()
    raw = connection.connection
    with raw.cursor() as cursor, open(path, "w", encoding="utf-8") as out:
        inline = cursor.mogrify(query, params).decode()
        start = time.perf_counter()
        cursor.copy_expert(f"COPY ({inline}) TO STDOUT WITH CSV HEADER", out)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a scratch PostgreSQL database (the bench needs COPY).")
    ensure_database(url)
    import django

    django.setup()
    started = time.perf_counter()
    build(args.rows)
    print(f"data ready: {args.rows} responses ({time.perf_counter() - started:.1f} s)")
    with tempfile.TemporaryDirectory() as work:
        ours, process, rss = time_exporter(Path(work) / "ours.csv")
        copy = time_copy(Path(work) / "copy.csv")
        lines = sum(1 for _ in open(Path(work) / "ours.csv", encoding="utf-8")) - 1  # noqa: SIM115
        size = (Path(work) / "ours.csv").stat().st_size / 2**20
    print(
        f"exporter : {lines} rows in {ours:.2f} s = {lines / ours:,.0f} rows/s, "
        f"peak RSS {rss:.0f} MiB, file {size:.0f} MiB"
    )
    print(f"command  : {process:.2f} s = {lines / process:,.0f} rows/s with Python and Django start-up")
    print(f"COPY     : {lines} rows in {copy:.2f} s = {lines / copy:,.0f} rows/s")
    print(
        f"ratio    : exporter takes {ours / copy:.2f}x COPY's time "
        "(2 shared cores: the exporter and the server compete for them)"
    )
    verdict = "PASS" if lines / ours >= 100_000 and rss <= 300 else "BELOW TARGET"
    print(f"target ≥ 100,000 rows/s and ≤ 300 MiB: {verdict}")


if __name__ == "__main__":
    main()
