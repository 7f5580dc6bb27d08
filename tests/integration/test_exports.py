"""Export round trip: what the CSV, JSONL and SQLite exports hold equals the database."""

from __future__ import annotations

import csv
import json
import sqlite3
import zipfile

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Enrollment, Job, Response
from annotation.services.exports.export import FORMATS, export_study
from annotation.services.jobs import JobCancelled, cancel_job, claim_job
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from annotation.services.pseudonyms import pseudonym
from scoring.models import Report

pytestmark = pytest.mark.django_db

CROWD_IDS = ["PROLIFIC-5f1e2d3c", "A2MTURKWORKER", "lab-ann"]


@pytest.fixture
def study_of_three_platforms(make_claim_study, enrolled):
    """Three participants from three platforms; one excluded; one report row."""
    study = make_claim_study(items=4, items_per_session=2, attention=0)
    for source, worker in zip(["prolific", "mturk", "lab"], CROWD_IDS, strict=True):
        person = enrolled(study, source=source, platform_worker_id=worker)
        while (assignment := assign_next_item(participant=person, study=study)) is not None:
            submit_response(assignment=assignment, answer={"label": "supports", "evidence": [0, 2]})
    Enrollment.objects.filter(participant__platform_worker_id="lab-ann").update(excluded=True)
    Report.objects.create(study=study, metric="accuracy", value=0.75, n=6, computed_at=timezone.now())
    return study


def expected(study) -> dict[int, dict]:
    rows = {}
    for response in Response.objects.filter(study=study).select_related("item", "participant", "assignment"):
        person = response.participant
        rows[response.pk] = {
            "item": response.item.external_id,
            "participant": pseudonym(
                study.pseudonym_salt,
                source=person.source,
                platform_worker_id=person.platform_worker_id,
                public_id=person.public_id,
            ),
            "participant_source": person.source,
            "position": response.assignment.position,
            "answer": response.answer,
            "correct": response.correct,
            "duration_seconds": response.duration_seconds,
            "excluded": person.platform_worker_id == "lab-ann",
            "claim": response.item.payload["claim"],
            "system": response.item.provenance["system"],
            "answered_at": response.answered_at,
        }
    return rows


def test_csv_round_trip(study_of_three_platforms, tmp_path):
    result = export_study(study_of_three_platforms, fmt="csv", path=tmp_path / "out.csv")
    with open(result.path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    truth = expected(study_of_three_platforms)
    assert result.rows == len(rows) == len(truth) == 6
    for row in rows:
        want = truth[int(row["response_id"])]
        assert row["item"] == want["item"] and row["participant"] == want["participant"]
        assert row["participant_source"] == want["participant_source"]
        assert int(row["position"]) == want["position"]
        assert json.loads(row["answer"]) == want["answer"]
        assert row["answer.label"] == "supports" and json.loads(row["answer.evidence"]) == [0, 2]
        assert row["correct"] == ("true" if want["correct"] else "false")
        assert float(row["duration_seconds"]) == pytest.approx(want["duration_seconds"])
        assert row["excluded"] == ("true" if want["excluded"] else "false")
        assert row["payload.claim"] == want["claim"] and row["provenance.system"] == want["system"]
        assert row["answered_at"] == want["answered_at"].isoformat(timespec="microseconds").replace(
            "+00:00", "Z"
        )
        assert "payload.sentences" not in row  # lists are not scalar payload fields


def test_jsonl_round_trip_keeps_types(study_of_three_platforms, tmp_path):
    result = export_study(study_of_three_platforms, fmt="jsonl", path=tmp_path / "out.jsonl")
    lines = [json.loads(line) for line in result.path.read_text().splitlines()]
    truth = expected(study_of_three_platforms)
    assert len(lines) == len(truth)
    for line in lines:
        want = truth[line["response_id"]]
        assert line["answer"] == want["answer"] and line["participant"] == want["participant"]
        assert line["correct"] is want["correct"] and line["excluded"] is want["excluded"]
        assert line["position"] == want["position"] and line["answer.evidence"] == [0, 2]
        assert line["payload.claim"] == want["claim"]


def test_sqlite_archive_opens_without_our_code_and_matches(study_of_three_platforms, tmp_path):
    import pandas

    result = export_study(study_of_three_platforms, fmt="sqlite", path=tmp_path / "out.zip")
    with zipfile.ZipFile(result.path) as archive:
        assert sorted(archive.namelist()) == sorted([f"{study_of_three_platforms.slug}.sqlite", "README.md"])
        readme = archive.read("README.md").decode()
        archive.extractall(tmp_path)
    for table in ("study", "items", "participants", "assignments", "responses", "reports"):
        assert f"## Table `{table}`" in readme
    database = sqlite3.connect(tmp_path / f"{study_of_three_platforms.slug}.sqlite")
    responses = pandas.read_sql("SELECT * FROM responses ORDER BY response_id", database)
    truth = expected(study_of_three_platforms)
    assert list(responses["response_id"]) == sorted(truth)
    for _, row in responses.iterrows():
        want = truth[row["response_id"]]
        assert json.loads(row["answer"]) == want["answer"] and row["participant"] == want["participant"]
    joined = database.execute(
        "SELECT count(*) FROM responses r JOIN participants p ON p.participant = r.participant "
        "JOIN items i ON i.item = r.item JOIN assignments a ON a.assignment_id = r.assignment_id"
    ).fetchone()[0]
    assert joined == 6
    assert database.execute("SELECT metric, value FROM reports").fetchall() == [("accuracy", 0.75)]
    assert database.execute("SELECT count(*) FROM participants WHERE excluded = 1").fetchone()[0] == 1


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "sqlite"])
def test_a_cancelled_export_stops_with_the_one_cancellation_exception(
    study_of_three_platforms, tmp_path, fmt
):
    """Exports take the same progress callback as every job and stop the same way."""
    from workers.progress import JobProgress

    job = Job.objects.create(kind="export", study=study_of_three_platforms, parameters={"format": fmt})
    claim_job(job.pk)
    cancel_job(job.pk)
    with pytest.raises(JobCancelled):
        export_study(
            study_of_three_platforms, fmt=fmt, path=tmp_path / f"out.{fmt}", progress=JobProgress(job.pk)
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "sqlite"])
def test_no_raw_crowd_id_in_any_export_by_default(study_of_three_platforms, tmp_path, fmt):
    path = tmp_path / f"out.{FORMATS[fmt]}"
    export_study(study_of_three_platforms, fmt=fmt, path=path)
    blobs = [path.read_bytes()]
    if fmt == "sqlite":
        with zipfile.ZipFile(path) as archive:
            blobs = [archive.read(name) for name in archive.namelist()]
    for blob in blobs:
        for crowd_id in CROWD_IDS:
            assert crowd_id.encode() not in blob
    export_study(study_of_three_platforms, fmt=fmt, path=path, include_platform_ids=True)
    assert fmt == "sqlite" or CROWD_IDS[0].encode() in path.read_bytes()


def test_pseudonyms_are_stable_within_a_study_and_differ_across_studies(
    study_of_three_platforms, make_claim_study, tmp_path
):
    other = make_claim_study(slug="other-study")
    same = dict(source="prolific", platform_worker_id=CROWD_IDS[0], public_id="x")
    assert pseudonym(study_of_three_platforms.pseudonym_salt, **same) == pseudonym(
        study_of_three_platforms.pseudonym_salt, **same
    )
    assert pseudonym(study_of_three_platforms.pseudonym_salt, **same) != pseudonym(
        other.pseudonym_salt, **same
    )
    assert study_of_three_platforms.pseudonym_salt != other.pseudonym_salt


def test_exportstudy_command_uses_the_same_code(study_of_three_platforms, tmp_path):
    path = tmp_path / "cli.csv"
    call_command("exportstudy", study_of_three_platforms.slug, "--format", "csv", "--output", str(path))
    export_study(study_of_three_platforms, fmt="csv", path=tmp_path / "service.csv")
    assert path.read_bytes() == (tmp_path / "service.csv").read_bytes()


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_postgres_copy_equals_the_row_by_row_writer(study_of_three_platforms, tmp_path, fmt):
    """The file that PostgreSQL writes (the fast path) holds the same values as the
    row-by-row writer, also for text with commas, quotes and line breaks."""
    study_of_three_platforms.items.filter(external_id="c1").update(
        payload={"claim": 'A "quoted", comma\nand a new line', "sentences": ["One.", "Two.", "Three."]}
    )
    export_study(study_of_three_platforms, fmt=fmt, path=tmp_path / "copy", include_platform_ids=True)
    export_study(
        study_of_three_platforms, fmt=fmt, path=tmp_path / "rows", include_platform_ids=True, use_copy=False
    )

    def parsed(name):
        if fmt == "jsonl":
            return [json.loads(line) for line in (tmp_path / name).read_text(encoding="utf-8").splitlines()]
        with open(tmp_path / name, encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle))
        return [[_normal(value) for value in row] for row in rows]

    copy_rows, python_rows = parsed("copy"), parsed("rows")
    assert copy_rows == python_rows and len(copy_rows) == (7 if fmt == "csv" else 6)
    if fmt == "csv":
        claims = [row[copy_rows[0].index("payload.claim")] for row in copy_rows]
    else:
        claims = [row["payload.claim"] for row in copy_rows]
    assert 'A "quoted", comma\nand a new line' in claims


def _normal(value: str):
    """Numbers compare as numbers (PostgreSQL writes 30 where Python writes 30.0)."""
    try:
        return float(value)
    except ValueError:
        return value


@pytest.fixture
def users_client(django_user_model):
    """An API client of an admin (who sees every study's responses)."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(
        django_user_model.objects.create_superuser("root", "root@example.org", "pw-root-1")
    )
    return client


def _csv_rows(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_one_name_per_column_in_csv_jsonl_sqlite_and_the_api(
    study_of_three_platforms, tmp_path, users_client
):
    """The same concept has the same name everywhere: ``item`` (the external id) and
    ``is_attention_check``; the JSONL keys are the CSV header; every column of the
    SQLite responses table (but its assignment key) is a CSV column of the same name."""
    header = _csv_rows(export_study(study_of_three_platforms, fmt="csv", path=tmp_path / "x.csv").path)[
        0
    ].keys()
    line = json.loads(
        export_study(study_of_three_platforms, fmt="jsonl", path=tmp_path / "x.jsonl")
        .path.read_text()
        .splitlines()[0]
    )
    assert list(line) == list(header)
    assert {"item", "is_attention_check"} <= set(header) and "attention_check" not in header
    export_study(study_of_three_platforms, fmt="sqlite", path=tmp_path / "x.sqlite")
    database = sqlite3.connect(tmp_path / "x.sqlite")
    responses = [row[1] for row in database.execute("PRAGMA table_info(responses)")]
    assert set(responses) - set(header) == {"assignment_id"}
    items = [row[1] for row in database.execute("PRAGMA table_info(items)")]
    assert {"item", "is_attention_check"} <= set(items)
    api = users_client.get(f"/api/v1/responses/?study={study_of_three_platforms.slug}").json()["results"][0]
    assert {"item", "is_attention_check"} <= set(api) and "attention_check" not in api


def test_the_csv_has_every_participant_column_of_the_sqlite_dump(study_of_three_platforms, tmp_path):
    export_study(study_of_three_platforms, fmt="sqlite", path=tmp_path / "x.sqlite")
    database = sqlite3.connect(tmp_path / "x.sqlite")
    database.row_factory = sqlite3.Row
    participants = {row["participant"]: dict(row) for row in database.execute("SELECT * FROM participants")}
    rows = _csv_rows(export_study(study_of_three_platforms, fmt="csv", path=tmp_path / "x.csv").path)
    assert set(next(iter(participants.values()))) <= set(rows[0])
    for row in rows:
        dumped = participants[row["participant"]]
        for name, value in dumped.items():
            if isinstance(value, int) and row[name] in ("true", "false"):
                assert value == (row[name] == "true"), name
            elif isinstance(value, (int, float)):
                assert float(row[name]) == value, name
            else:
                assert row[name] == (value or ""), name
    assert {row["participant_status"] for row in rows} == {"active"}
    assert {row["answered_count"] for row in rows} == {"2"}


def test_ranking_choices_are_flattened_to_one_column_per_criterion_and_side(
    example_study_file, enrolled, tmp_path
):
    from annotation.services.authoring.studies import load_study_file

    data = example_study_file("ranking")
    study = load_study_file(data).study
    person = enrolled(study, source="lab", platform_worker_id="ranker")
    assignment = assign_next_item(participant=person, study=study)
    shown = assignment.state["shown"]
    choices = {
        "consistency": {"most": shown[0], "least": shown[1]},
        "fluency": {"most": shown[2], "least": shown[0]},
    }
    submit_response(assignment=assignment, answer={"shown": shown, "choices": choices})
    [row] = _csv_rows(export_study(study, fmt="csv", path=tmp_path / "r.csv").path)
    for criterion, sides in choices.items():
        for side, system in sides.items():
            assert row[f"choice.{criterion}.{side}"] == system
    [line] = export_study(study, fmt="jsonl", path=tmp_path / "r.jsonl").path.read_text().splitlines()
    assert json.loads(line)["choice.fluency.least"] == shown[0]


def test_exportstudy_writes_a_sqlite_file_or_a_zip_by_the_name(study_of_three_platforms, tmp_path):
    call_command(
        "exportstudy",
        study_of_three_platforms.slug,
        "--format",
        "sqlite",
        "--output",
        str(tmp_path / "x.sqlite"),
    )
    database = sqlite3.connect(tmp_path / "x.sqlite")
    assert database.execute("SELECT count(*) FROM responses").fetchone()[0] == 6
    assert database.execute("SELECT study FROM study").fetchone()[0] == study_of_three_platforms.slug
    call_command(
        "exportstudy",
        study_of_three_platforms.slug,
        "--format",
        "sqlite",
        "--output",
        str(tmp_path / "x.zip"),
    )
    with zipfile.ZipFile(tmp_path / "x.zip") as archive:
        assert sorted(archive.namelist()) == ["README.md", f"{study_of_three_platforms.slug}.sqlite"]
        assert "| `participant_status` |" in archive.read("README.md").decode()


def _rows_in_every_format(study, tmp_path) -> dict[str, list[dict]]:
    """The response rows of the CSV, JSONL and SQLite exports (SQLite: responses joined to participants)."""
    csv_rows = _csv_rows(export_study(study, fmt="csv", path=tmp_path / "x.csv").path)
    jsonl = [
        json.loads(line)
        for line in export_study(study, fmt="jsonl", path=tmp_path / "x.jsonl").path.read_text().splitlines()
    ]
    export_study(study, fmt="sqlite", path=tmp_path / "x.sqlite")
    database = sqlite3.connect(tmp_path / "x.sqlite")
    database.row_factory = sqlite3.Row
    joined = database.execute(
        "SELECT * FROM responses r JOIN participants p USING (participant) ORDER BY r.response_id"
    )
    return {"csv": csv_rows, "jsonl": jsonl, "sqlite": [dict(row) for row in joined]}


def _truth(value) -> bool | None:
    """A boolean cell as each format writes it (CSV text, JSON boolean, SQLite 1/0)."""
    return {"true": True, "false": False, "": None, 1: True, 0: False}.get(value, value)


def test_too_fast_and_adjudicated_answers_are_columns_of_every_format(
    study_of_three_platforms, tmp_path, django_user_model
):
    """Usability defect 6: ``too_fast`` is stored, so it is exported; an adjudication is a
    response too, marked ``adjudicated`` so that it is never averaged in by mistake."""
    from annotation.services.analysis.adjudication import adjudicate

    fast = Response.objects.filter(study=study_of_three_platforms).order_by("id").first()
    Response.objects.filter(pk=fast.pk).update(too_fast=True)
    judge = django_user_model.objects.create_user("judge", password="pw")
    final = adjudicate(
        study=study_of_three_platforms,
        item=fast.item,
        answer={"label": "contradicts", "evidence": [1]},
        note="",
        user=judge,
    )
    for fmt, rows in _rows_in_every_format(study_of_three_platforms, tmp_path).items():
        by_id = {int(row["response_id"]): row for row in rows}
        assert len(by_id) == Response.objects.filter(study=study_of_three_platforms).count(), fmt
        for response_id, row in by_id.items():
            assert _truth(row["too_fast"]) is (response_id == fast.pk), fmt
            assert _truth(row["adjudicated"]) is (response_id == final.pk), fmt
        assert by_id[final.pk]["participant_source"] == "adjudicator"


def test_the_exam_outcome_of_each_participant_is_in_the_study_export(
    study_of_three_platforms, tmp_path, example_study_file
):
    """Usability defect 5: the exam's answers are the exam study's, under another pseudonym;
    the study's own export carries each participant's outcome in the exam it requires."""
    from annotation.models import Exam, ExamAttempt
    from annotation.services.authoring.studies import load_study_file

    exam = Exam.objects.get(study=load_study_file(example_study_file("simulation-exam")).study)
    study_of_three_platforms.qualification = exam
    study_of_three_platforms.save(update_fields=["qualification"])
    prolific, mturk, _ = (
        Enrollment.objects.get(
            study=study_of_three_platforms, participant__platform_worker_id=worker
        ).participant
        for worker in CROWD_IDS
    )
    now = timezone.now()
    for number, (status, correct) in enumerate([("failed", 1), ("passed", 3)], start=1):
        ExamAttempt.objects.create(
            exam=exam, participant=prolific, number=number, status=status,
            correct_count=correct, question_count=3, started_at=now, finished_at=now,
        )  # fmt: skip
    ExamAttempt.objects.create(exam=exam, participant=mturk, number=1, started_at=now)  # still answering
    outcome = {
        prolific.pk: (2, 3, 3, True),
        mturk.pk: (1, None, None, False),
    }
    for fmt, rows in _rows_in_every_format(study_of_three_platforms, tmp_path).items():
        for row in rows:
            person = Response.objects.get(pk=int(row["response_id"])).participant_id
            got = tuple(
                _truth(row[name]) if name == "exam_passed" else _number(row[name])
                for name in ("exam_attempts", "exam_correct", "exam_questions", "exam_passed")
            )
            assert got == outcome.get(person, (0, None, None, False)), fmt


def test_a_study_without_an_exam_has_no_exam_columns(study_of_three_platforms, tmp_path):
    header = _csv_rows(export_study(study_of_three_platforms, fmt="csv", path=tmp_path / "x.csv").path)[0]
    assert not [name for name in header if name.startswith("exam_")]


def _number(value):
    return None if value in ("", None) else int(value)


def test_the_api_names_each_response_s_participant_as_the_csv_export_does(
    study_of_three_platforms, tmp_path, users_client
):
    """Usability defect 5: the API's responses carry the export's participant id
    (``pseudonym``) beside the site-wide ``public_id`` (``participant``)."""
    exported = {
        int(row["response_id"]): row["participant"]
        for row in _csv_rows(export_study(study_of_three_platforms, fmt="csv", path=tmp_path / "x.csv").path)
    }
    api = users_client.get(f"/api/v1/responses/?study={study_of_three_platforms.slug}").json()["results"]
    assert len(api) == len(exported) == Response.objects.filter(study=study_of_three_platforms).count()
    for response in api:
        assert response["pseudonym"] == exported[response["id"]]
        assert response["participant"] == Response.objects.get(pk=response["id"]).participant.public_id
