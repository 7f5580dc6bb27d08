"""Loading a big items file: ``manage.py loaditems`` of N CSV rows, wall time and peak RSS.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/roft_bench .venv/bin/python bench/load_items.py \
        [--rows 100000 1000000] [--seed 7] [--format csv|jsonl]

For each N: writes a CSV (``id,context,passage.a.text,passage.a.system``, the shape of the
adversarial review's file, texts drawn from a seeded generator) or the same items as JSON
Lines, makes a fresh questionnaire study (one scale question) in the database named by
DATABASE_URL (created if missing; use a scratch database: each run adds a study of N
items), then runs ``manage.py loaditems`` on it in a child process and prints its wall time,
its CPU seconds and peak RSS (the child's, from ``wait4``;
PostgreSQL's own work is not in them) and the machine's load average before and after: on a
shared machine the wall time moves with whatever else runs. The study is deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._database import ensure_database  # noqa: E402 - after the path
from bench._django import run_manage  # noqa: E402 - after the path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only")
WORDS = "the a river bridge old city museum walk slow quiet bright green stone paper light".split()  # noqa: SIM905
CONFIG = {"questions": [{"id": "fluency", "type": "scale", "points": 5, "text": "How fluent is it?"}]}


def write_file(path: Path, rows: int, seed: int, file_format: str) -> None:
    """``rows`` items, texts of 8 to 20 words from ``random.Random(seed)``."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8", newline="") as out:
        if file_format == "csv":
            out.write("id,context,passage.a.text,passage.a.system\n")
        for number in range(rows):
            text = " ".join(rng.choices(WORDS, k=rng.randint(8, 20)))
            system = f"sys{rng.randint(1, 4)}"
            if file_format == "csv":
                out.write(f"i{number},Rate this.,{text},{system}\n")
            else:
                payload = {"context": "Rate this.", "passages": [{"id": "a", "text": text, "system": system}]}
                out.write(json.dumps({"external_id": f"i{number}", "payload": payload}) + "\n")


def fresh_study(slug: str) -> None:
    import django

    django.setup()
    from annotation.models import Study

    drop_study(slug)
    Study.objects.create(slug=slug, title=slug, kind="questionnaire", config=CONFIG)


def drop_study(slug: str) -> None:
    """The study, its items by SQL first: the ORM's cascade looks the items' rows up by id, in one
    query past PostgreSQL's 65,535 parameters for a study of 100,000 items."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM annotation_item WHERE study_id IN (SELECT id FROM annotation_study WHERE slug = %s)",
            [slug],
        )
    from annotation.models import Study

    Study.objects.filter(slug=slug).delete()  # the rest of it, a few rows


def run_loaditems(slug: str, path: Path) -> tuple[float, float, float, str]:
    """(wall seconds of the whole child process, its CPU seconds, peak RSS MiB, its output)."""
    run = run_manage("loaditems", slug, str(path))
    if run.status:
        sys.exit(f"loaditems failed after {run.seconds:.1f} s: {run.output[-2000:]}")
    return run.seconds, run.cpu_seconds, run.peak_mib, run.output.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--format", choices=["csv", "jsonl"], default="csv")
    args = parser.parse_args()
    ensure_database(os.environ["DATABASE_URL"])
    with tempfile.TemporaryDirectory() as work:
        for rows in args.rows:
            path = Path(work) / f"items-{rows}.{args.format}"
            write_file(path, rows, args.seed, args.format)
            slug = f"bench-load-items-{rows}"
            fresh_study(slug)
            load_before = os.getloadavg()[0]
            seconds, cpu, rss, said = run_loaditems(slug, path)
            load_after = os.getloadavg()[0]
            size = path.stat().st_size / 2**20
            print(
                f"{rows:>9,} rows ({size:.0f} MiB {args.format}): {seconds:7.1f} s wall, {cpu:6.1f} s CPU, "
                f"peak RSS {rss:5.0f} MiB, load {load_before:.1f} -> {load_after:.1f}  [{said}]",
                flush=True,
            )
            path.unlink()
            drop_study(slug)


if __name__ == "__main__":
    main()
