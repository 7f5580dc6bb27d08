"""Export speed: CSV, JSONL and the SQLite dump of N responses, each beside its anchor.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/roft_bench .venv/bin/python bench/export.py \
        [--rows N] [--repeat R]

Builds (once, with COPY-free ``INSERT … SELECT … generate_series``) a claim study with N
responses in the database named by DATABASE_URL (created if missing; use a scratch
database). Then, R times, interleaved:

- CSV: ``manage.py exportstudy --format csv`` in a child process (its own "in X s", the
  whole process, peak RSS) against ``COPY (the exporter's own SELECT) TO STDOUT (FORMAT csv)``;
- JSONL: ``--format jsonl`` against ``COPY (SELECT row_to_json(t) FROM (that SELECT) t)``;
- SQLite: ``--format sqlite --output x.sqlite`` (and the zip with the README) against COPY
  of the response rows to CSV plus ``sqlite3 x.db ".import --csv"``.

Each anchor runs the same SELECT with the server's default settings. Prints the median of
the R runs with its range and the ratio to the anchor. On a shared machine the absolute
figures move with whatever else runs; the ratios are the numbers to compare.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._database import ensure_database, settle_tables  # noqa: E402 - after the path
from bench._django import run_manage  # noqa: E402 - after the path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only")
SLUG = "bench-export"
ITEMS = 1000
PER_PARTICIPANT = 100


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
            "INSERT INTO annotation_participant (public_id, source, platform_worker_id,"
            " blocked, created_at) SELECT 'bench' || g, 'prolific', 'PID' || g, false, now()"
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


def run_exporter(fmt: str, path: Path) -> tuple[float, float, float]:
    """`manage.py exportstudy` in a child process: (seconds of the export as the command
    reports it, seconds of the whole process with Python and Django start-up, peak RSS MiB)."""
    run = run_manage("exportstudy", SLUG, "--format", fmt, "--output", str(path))
    if run.status:
        sys.exit(f"exportstudy failed: {run.output}")
    export = float(re.search(r"in ([0-9.]+) s\.", run.output).group(1))
    return export, run.seconds, run.peak_mib


def anchor_copy(target: str, path: Path, *, wrap_json: bool = False, header: bool = False) -> float:
    """Seconds for PostgreSQL to COPY the exporter's own SELECT (for ``target``) to a file,
    with the server's default settings (parallel plans, JIT as configured)."""
    from django.db import connection, transaction

    from annotation.models import Study
    from annotation.services.exports.columns import response_columns
    from annotation.services.exports.selects import pseudonyms_joined, response_select

    study = Study.objects.get(slug=SLUG)
    columns = response_columns(study)
    with pseudonyms_joined(study), connection.cursor() as cursor:
        cursor.execute("RESET jit")
        sql, params = response_select(study, columns, target)
        query = cursor.cursor.mogrify(sql, params).decode()
        if wrap_json:
            query = f"SELECT row_to_json(t) FROM ({query}) t"  # noqa: S608 - our own SELECT
        options = "FORMAT text" if wrap_json else "FORMAT csv" + (", HEADER" if header else "")
        with open(path, "wb") as out:
            start = time.perf_counter()
            cursor.cursor.copy_expert(f"COPY ({query}) TO STDOUT WITH ({options})", out)
            seconds = time.perf_counter() - start
    transaction.get_connection().close()
    return seconds


def anchor_sqlite(work: Path) -> float:
    """COPY the response rows to CSV, then ``sqlite3 .import`` them: seconds for both."""
    rows_csv, database = work / "anchor.csv", work / "anchor.db"
    database.unlink(missing_ok=True)
    copy = anchor_copy("csv", rows_csv, header=True)
    start = time.perf_counter()
    subprocess.run(["sqlite3", str(database), f".import --csv {rows_csv} responses"], check=True)
    return copy + time.perf_counter() - start


def median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s [{min(values):.2f}–{max(values):.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a scratch PostgreSQL database (the bench needs COPY).")
    ensure_database(url)
    import django

    django.setup()
    started = time.perf_counter()
    build(args.rows)
    settle_tables()
    print(f"data ready: {args.rows} responses ({time.perf_counter() - started:.1f} s)")
    runs: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for _ in range(args.repeat):
            for name, value in measure_once(work).items():
                runs.setdefault(name, []).append(value)
    report(runs, args.rows)


def measure_once(work: Path) -> dict[str, float]:
    figures: dict[str, float] = {}
    for fmt, extension in (("csv", "csv"), ("jsonl", "jsonl"), ("sqlite", "sqlite"), ("sqlite", "zip")):
        name = fmt if extension != "zip" else "zip"
        export, whole, rss = run_exporter(fmt, work / f"ours.{extension}")
        figures |= {f"{name}": export, f"{name} whole": whole, f"{name} rss": rss}
        figures[f"{name} MiB"] = (work / f"ours.{extension}").stat().st_size / 2**20
        (work / f"ours.{extension}").unlink()
        if name == "csv":
            figures["csv anchor"] = anchor_copy("csv", work / "anchor.csv")
        elif name == "jsonl":
            figures["jsonl anchor"] = anchor_copy("json", work / "anchor.jsonl", wrap_json=True)
        elif name == "sqlite":
            figures["sqlite anchor"] = anchor_sqlite(work)
    return figures


def report(runs: dict[str, list[float]], rows: int) -> None:
    def mid(name: str) -> float:
        return statistics.median(runs[name])

    print(f"{'figure':<8} {'ours (export itself)':<26} {'whole command':<26} {'anchor':<26} ratio  goal")
    goals = {"csv": 1.15, "jsonl": 1.2, "sqlite": 1.5}
    for name in ("csv", "jsonl", "sqlite", "zip"):
        anchor = "sqlite anchor" if name == "zip" else f"{name} anchor"
        ratio = mid(name) / mid(anchor)
        goal = goals.get(name)
        verdict = "" if goal is None else f"≤{goal}x: {'met' if ratio <= goal else 'NOT met'}"
        print(
            f"{name:<8} {median(runs[name]):<26} {median(runs[f'{name} whole']):<26} "
            f"{median(runs[anchor]):<26} {ratio:.2f}x {verdict}"
        )
        print(
            f"{'':<8} {rows / mid(name):,.0f} rows/s; "
            f"whole command {rows / mid(f'{name} whole'):,.0f} rows/s; "
            f"anchor {rows / mid(anchor):,.0f} rows/s; peak RSS {max(runs[f'{name} rss']):.0f} MiB; "
            f"file {mid(f'{name} MiB'):.0f} MiB"
        )
    whole = rows / mid("csv whole")
    print(f"CSV whole command ≥ 110,000 rows/s: {'met' if whole >= 110_000 else 'NOT met'} ({whole:,.0f})")
    print("zip = the SQLite dump zipped with its README (the export job's file), against the same anchor.")


if __name__ == "__main__":
    main()
