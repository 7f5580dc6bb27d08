"""All the reports of a study with a million responses: time and peak RSS.

Builds (once; reused while its size matches) a RoFT ``boundary`` study in the database
named by DATABASE_URL with COPY: 1,000,000 responses by 50,000 players over 200,000
passages (5 answers each, 20 rounds per player), 5% of players flagged by attention
checks and 1% excluded by the researcher. Then a fresh Python process computes every
report of both populations exactly as the reports job does, and reports its wall time
and its peak resident memory (``ru_maxrss``, the whole process), and, in the same process
right after, its anchor: a raw binary ``COPY`` of exactly the columns the reports read
(the responses' fields, the items' fields, the enrollments) to nowhere. Targets: ≤ 10 s,
≤ 1 GiB, and ≤ 2× the anchor.

The anchor still reads the items' fields, although a reports run whose study's items did
not change since the last run takes them from its cache instead (``scoring.item_cache``;
the bench's runs after the first do): the anchor stays the raw read of every column the
reports need, the cache being one way of not reading some of them. It reads no response or
enrollment ids (the reports read none), nor the participants' sources (a join the reports
make for the enrollments, 50,000 rows here).

    export DATABASE_URL=postgres://…/roft_iN
    .venv/bin/python bench/reports.py [--responses 1000000] [--kind boundary|claim] [--rebuild]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-secret")

from bench._database import ensure_database, settle_tables  # noqa: E402 - after the path

# The RoFT game is where a million answers come from; ``--kind claim`` measures instead a
# kind whose module is installed, whose agreement values the kind gives answer by answer.
SLUGS = {"boundary": "bench-reports", "claim": "bench-reports-claim"}
LABELS = ["supports", "contradicts", "neutral"]
PER_ITEM = 5
ROUNDS = 20
SENTENCES = 10
CHUNK = 100_000
REASONS = [
    "It repeats the same phrase.",
    "The topic suddenly changes.",
    "A fact contradicts the first sentence.",
    "The grammar is off.",
    "Too generic to be written by a person.",
    "A name appears that was never introduced.",
]
CATEGORIES = ["news", "stories", "recipes", "speeches"]
GENERATORS = ["gpt2-xl", "gpt2", "ctrl", "grover"]


def setup_django() -> None:
    """Django on the scratch database named by DATABASE_URL, created and migrated if need be."""
    import django
    from django.core.management import call_command

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a scratch PostgreSQL database (the bench needs COPY).")
    ensure_database(url)
    django.setup()
    call_command("migrate", verbosity=0)


def build(responses: int, kind: str) -> None:
    """Create the study and COPY its rows (items, players, enrollments, assignments, responses)."""
    from django.db import connection, transaction

    from annotation.models import Study

    items, players = responses // PER_ITEM, responses // ROUNDS
    rng = np.random.default_rng(2024)
    _drop(connection, SLUGS[kind])
    with transaction.atomic():
        study = Study.objects.create(
            slug=SLUGS[kind],
            title=f"Bench: {responses} {kind} answers",
            kind=kind,
            status="live",
            annotations_per_item=PER_ITEM,
        )
        cursor = connection.cursor()
        item_ids = _reserve(cursor, "annotation_item", items)
        player_ids = _reserve(cursor, "annotation_participant", players)
        assignment_ids = _reserve(cursor, "annotation_assignment", responses)
        boundary = rng.integers(1, SENTENCES + 1, items)
        _copy_items(cursor, study.pk, item_ids, boundary, rng, kind)
        _copy_players(cursor, study.pk, player_ids, rng)
        _copy_answers(cursor, study.pk, item_ids, player_ids, assignment_ids, boundary, rng, kind)
    settle_tables()


def _drop(connection, slug: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM annotation_study WHERE slug = %s", [slug])
        found = cursor.fetchone()
        if not found:
            return
        study = found[0]
        for table in (
            "scoring_report",
            "annotation_job",
            "annotation_response",
            "annotation_assignment",
            "annotation_enrollment",
            "annotation_item",
            "scoring_itemcolumns",  # after the items (their delete trigger bumps its version)
        ):
            cursor.execute(f"DELETE FROM {table} WHERE study_id = %s", [study])  # noqa: S608 - fixed names
        cursor.execute(
            "DELETE FROM annotation_participant WHERE id IN "
            "(SELECT participant_id FROM annotation_enrollment WHERE study_id = %s)",
            [study],
        )
        cursor.execute("DELETE FROM annotation_study WHERE id = %s", [study])


def _reserve(cursor, table: str, count: int) -> np.ndarray:
    """Ids for ``count`` new rows, taken from the table's sequence in one step."""
    cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
    sequence = cursor.fetchone()[0]
    cursor.execute("SELECT nextval(%s)", [sequence])
    first = cursor.fetchone()[0]
    cursor.execute("SELECT setval(%s, %s)", [sequence, first + count])
    return np.arange(first, first + count, dtype=np.int64)


def _copy(cursor, table: str, columns: str, lines) -> None:
    buffer = io.StringIO()
    for rows, line in enumerate(lines, start=1):
        buffer.write(line)
        if rows % CHUNK == 0:
            _flush(cursor, table, columns, buffer)
            buffer = io.StringIO()
    _flush(cursor, table, columns, buffer)


def _flush(cursor, table: str, columns: str, buffer: io.StringIO) -> None:
    buffer.seek(0)
    cursor.copy_expert(f"COPY {table} ({columns}) FROM STDIN", buffer)


def _copy_items(cursor, study: int, ids: np.ndarray, boundary: np.ndarray, rng, kind: str) -> None:
    p = np.round(rng.integers(0, 11, len(ids)) / 10, 1)
    category = rng.integers(0, len(CATEGORIES), len(ids))
    model = rng.integers(0, len(GENERATORS), len(ids))
    sentences = [
        f"Sentence {k} of a passage about the harbour, the market and the weather." for k in range(SENTENCES)
    ]

    def lines():
        for index, pk in enumerate(ids):
            payload = {
                "sentences": sentences,
                "boundary": int(boundary[index]),
                "category": CATEGORIES[category[index]],
                "model": GENERATORS[model[index]],
                "p": float(p[index]),
            }
            if kind == "claim":
                payload = {
                    "claim": "The market opens at dawn.",
                    "sentences": sentences[:5],
                    "claim_type": "new_fact",
                }
            provenance = {"system": GENERATORS[model[index]], "source_id": f"doc{index}"}
            fields = [
                pk,
                study,
                f"p{index}",
                json.dumps(payload),
                "f",
                "\\N",
                json.dumps(provenance),
                PER_ITEM,
                "now()",
                "",
            ]
            yield "\t".join(map(str, fields)) + "\n"

    columns = (
        "id, study_id, external_id, payload, is_attention_check, gold, provenance, slots_taken, created_at, "
        "explanation"
    )
    _copy(cursor, "annotation_item", columns, lines())


def _copy_players(cursor, study: int, ids: np.ndarray, rng) -> None:
    flagged = rng.random(len(ids)) < 0.05
    excluded = rng.random(len(ids)) < 0.01
    _copy(
        cursor,
        "annotation_participant",
        "id, public_id, source, platform_worker_id, blocked, created_at",
        (f"{pk}\tb{pk:011x}\tmturk\tbench-{pk}\tf\tnow()\n" for pk in ids),
    )
    _copy(
        cursor,
        "annotation_enrollment",
        "participant_id, study_id, status, platform_session, answered_count, points_total, attention_passed, "
        "attention_failed, excluded, flagged, created_at",
        (
            f"{pk}\t{study}\tcompleted\t{{}}\t{ROUNDS}\t0\t1\t{1 if f else 0}\t{'t' if x else 'f'}"
            f"\t{'t' if f else 'f'}\tnow()\n"
            for pk, f, x in zip(ids, flagged, excluded, strict=True)
        ),
    )
    cursor.execute("CREATE TEMP TABLE bench_flagged (id bigint) ON COMMIT DROP")
    _copy(cursor, "bench_flagged", "id", (f"{pk}\n" for pk in ids[flagged]))


def _copy_answers(cursor, study, item_ids, player_ids, assignment_ids, boundary, rng, kind) -> None:
    """Response j: item j % items in round j // items; a player's rounds are 20 consecutive j."""
    items = len(item_ids)
    total = len(assignment_ids)
    j = np.arange(total)
    item = j % items
    player = j // ROUNDS
    position = j % ROUNDS + 1
    late = np.minimum(rng.geometric(0.45, total) - 1, SENTENCES)
    early = rng.random(total) < 0.18
    guess = np.clip(
        np.where(early, boundary[item] - rng.integers(1, 4, total), boundary[item] + late), 1, SENTENCES
    )
    distance = guess - boundary[item]
    points = np.where(distance < 0, 0, np.maximum(0, 5 - distance))
    seconds = np.round(rng.uniform(4, 60, total), 2)
    reason = rng.integers(0, len(REASONS), total)
    start = 1_700_000_000

    cursor.execute("SELECT id FROM bench_flagged")
    flagged_players = {row[0] for row in cursor.fetchall()}

    def assignment_lines():
        for k in range(total):
            stamp = _stamp(start + k)
            yield (
                f"{assignment_ids[k]}\t{study}\t{item_ids[item[k]]}\t{player_ids[player[k]]}\t{position[k]}\t"
                f"1\tanswered\t{{}}\t{stamp}\t{stamp}\t{stamp}\t{stamp}\n"
            )

    def response_lines():
        for k in range(total):
            g, d = int(guess[k]), int(distance[k])
            answer = json.dumps({"guess": g, "reason": REASONS[reason[k]], "reason_categories": ["other"]})
            if kind == "claim":
                label = LABELS[g % 3]
                answer = json.dumps({"label": label, "evidence": [] if label == "neutral" else [g % 5]})
            details = json.dumps(
                {"order": int(position[k]), "distance": d, "seconds_per_sentence": [2.5] * g}
            )
            flagged = "t" if int(player_ids[player[k]]) in flagged_players else "f"
            stamp = _stamp(start + k)
            fields = [assignment_ids[k], study, item_ids[item[k]], player_ids[player[k]], answer, points[k]]
            fields += [
                "t" if d == 0 else "f",
                details,
                "{}",
                "f",
                flagged,
                stamp,
                stamp,
                seconds[k],
                "f",
                "f",
            ]
            yield "\t".join(map(str, fields)) + "\n"

    _copy(
        cursor,
        "annotation_assignment",
        "id, study_id, item_id, participant_id, position, attempt, status, state, "
        "assigned_at, expires_at, shown_at, answered_at",
        assignment_lines(),
    )
    _copy(
        cursor,
        "annotation_response",
        "assignment_id, study_id, item_id, participant_id, answer, points, correct, score_details, "
        "display_order, is_attention_check, flagged, shown_at, answered_at, duration_seconds, imported, "
        "too_fast",
        response_lines(),
    )


def _stamp(epoch: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S+00", time.gmtime(epoch))


def existing_responses(slug: str) -> int:
    from annotation.models import Response, Study

    study = Study.objects.filter(slug=slug).first()
    return Response.objects.filter(study=study).count() if study else 0


def warm_up() -> None:
    """Import what a running worker has already imported (SciPy, the report builders)."""
    import scipy.stats  # noqa: F401

    from scoring.reports import all_reports

    all_reports()


def measure(slug: str) -> dict:
    """Run in a fresh process: compute every report of the bench study."""
    import django

    django.setup()  # the parent created and migrated the database
    from annotation.models import Study
    from scoring.services import compute_study_reports

    study = Study.objects.get(slug=slug)
    warm_up()
    backend = _backend_pid()
    # The anchor runs before and after the reports (interleaved: the machine may be shared).
    anchor_first, anchor_first_cpu = _anchor(study, backend)
    before = peak_rss_mib()
    cpu_before, db_before = _cpu_seconds(), _process_cpu_seconds(backend)
    marks: list[tuple[float, str]] = []

    def progress(done: int, total: int, message: str) -> None:
        marks.append((time.perf_counter(), message))

    start = time.perf_counter()
    result = compute_study_reports(study, progress=progress)
    end = time.perf_counter()
    cpu, db = _cpu_seconds() - cpu_before, _process_cpu_seconds(backend) - db_before
    ends = [moment for moment, _ in marks[1:]] + [end]
    anchor_last, anchor_last_cpu = _anchor(study, backend)
    return {
        "seconds": end - start,
        "anchor_seconds": (anchor_first + anchor_last) / 2,
        "anchors": [anchor_first, anchor_last],
        "anchor_cpu_seconds": (anchor_first_cpu + anchor_last_cpu) / 2,
        "rows": result.rows,
        "responses": result.fingerprint["responses"],
        "rss_before_mib": before,
        "peak_rss_mib": peak_rss_mib(),
        "cpu_seconds": cpu,
        "database_cpu_seconds": db,
        "load_average": os.getloadavg()[0],
        "steps": [(message, later - moment) for (moment, message), later in zip(marks, ends, strict=True)],
    }


def _anchor(study, backend: int) -> tuple[float, float]:
    """The anchor's wall time and its CPU time (this process and its PostgreSQL backend)."""
    cpu, db = _cpu_seconds(), _process_cpu_seconds(backend)
    seconds = raw_read_seconds(study)
    return seconds, _cpu_seconds() - cpu + _process_cpu_seconds(backend) - db


def raw_read_seconds(study) -> float:
    """The anchor: binary COPY of the columns the reports read, in one snapshot, to nowhere."""
    from django.db import connection

    from annotation.kinds import TaskKind
    from annotation.models import Enrollment, Item, Response
    from scoring.data import _RESPONSE_FIELDS, _declared_fields, _expression, one_snapshot
    from scoring.reports import report_for
    from scoring.reports.base import Field

    builder, kind = report_for(study.kind), study.task_kind
    asks_each_answer = type(kind).agreement_values is not TaskKind.agreement_values
    declared = _declared_fields(() if asks_each_answer else kind.agreement_fields)
    answers = {"answer": Field("answer", "json")} if asks_each_answer else {}
    reads = [
        (
            Response.objects.filter(study=study),
            {**_RESPONSE_FIELDS, **builder.response_fields, **declared, **answers},
        ),
        (Item.objects.filter(study=study), {"attention": None, **builder.item_fields}),
        (Enrollment.objects.filter(study=study), {}),
    ]
    start = time.perf_counter()
    with one_snapshot(), connection.cursor() as cursor:
        for query, fields in reads:
            # ids only where the reports read them (the items': the responses are matched to them)
            expressions = [_expression(f) for f in fields.values() if f is not None]
            if query.model is Item:
                expressions = ["id", *expressions, "is_attention_check"]
            if query.model is Enrollment:
                expressions += ["participant_id", "excluded"]
            sql, params = query.order_by().values_list(*expressions).query.sql_with_params()
            inline = cursor.cursor.mogrify(sql, params).decode()
            cursor.cursor.copy_expert(f"COPY ({inline}) TO STDOUT (FORMAT binary)", _Nowhere())
    return time.perf_counter() - start


class _Nowhere:
    def write(self, data) -> int:
        return len(data)


def _backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _process_cpu_seconds(pid: int) -> float:
    """CPU time of another local process (the PostgreSQL backend serving this one)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib() -> float:
    """This process's peak resident memory (VmHWM; ru_maxrss can count the forking parent)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=1_000_000)
    parser.add_argument("--kind", choices=sorted(SLUGS), default="boundary")
    parser.add_argument("--rebuild", action="store_true", help="build the data even if it is there")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    slug = SLUGS[args.kind]
    if args.measure:
        print(json.dumps(measure(slug)))
        return 0
    setup_django()
    if args.rebuild or existing_responses(slug) != args.responses:
        started = time.perf_counter()
        build(args.responses, args.kind)
        print(f"built {args.responses} responses in {time.perf_counter() - started:.0f} s")
    child = subprocess.run(
        [sys.executable, __file__, "--measure", "--kind", args.kind],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    figures = json.loads(child.stdout.strip().splitlines()[-1])
    for message, spent in figures["steps"]:
        print(f"  {spent:6.2f} s  {message}")
    cores = os.cpu_count()
    print(
        f"  CPU: this process {figures['cpu_seconds']:.2f} s, its PostgreSQL backend "
        f"{figures['database_cpu_seconds']:.2f} s; "
        f"load average {figures['load_average']:.1f} on {cores} cores"
    )
    ratio = figures["seconds"] / figures["anchor_seconds"]
    first, last = figures["anchors"]
    print(
        f"anchor: binary COPY of the columns the reports read {figures['anchor_seconds']:.2f} s "
        f"(before the reports {first:.2f} s, after {last:.2f} s); "
        f"reports take {ratio:.2f}x its time (target ≤ 2x: {'met' if ratio <= 2 else 'NOT met'})"
    )
    spent = figures["cpu_seconds"] + figures["database_cpu_seconds"]
    anchor_cpu = figures["anchor_cpu_seconds"]
    print(
        f"  CPU (this process + its backend): reports {spent:.2f} s, anchor {anchor_cpu:.2f} s: "
        f"{spent / anchor_cpu:.2f}x (what the ratio tends to on an idle machine)"
    )
    met = figures["seconds"] <= 10 and figures["peak_rss_mib"] <= 1024
    print(
        f"reports of {figures['responses']} responses: {figures['rows']} rows "
        f"in {figures['seconds']:.2f} s, "
        f"peak RSS {figures['peak_rss_mib']:.0f} MiB (after start-up {figures['rss_before_mib']:.0f} MiB); "
        f"targets 10 s and 1024 MiB: {'met' if met else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
