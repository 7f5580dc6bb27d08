"""The reports' item columns cached per item version (``scoring.item_cache``), on PostgreSQL:
the same figures with and without the blob, a new version on every item insert, update and
delete but not on ``slots_taken``, and never a blob of items that changed while being read."""

import threading
from contextlib import nullcontext

import numpy as np
import pytest
from django.db import connection, transaction
from django.db.models import F

import scoring.data
from annotation.models import Item, Response
from scoring.data import load_study_data, one_snapshot
from scoring.item_cache import decode, encode
from scoring.models import ItemColumns, Report
from scoring.reports import report_for
from scoring.services import DEFAULT_BY, compute_study_reports
from stats.groups import factorize
from tests.factories import ItemFactory
from tests.helpers.reports import game_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def item_reads(monkeypatch) -> list[int]:
    """Counts the reads of the items' table (one entry per read)."""
    reads: list[int] = []
    original = scoring.data._read_table

    def counting(query, fields, **kwargs):
        if query.model is Item:
            reads.append(1)
        return original(query, fields, **kwargs)

    monkeypatch.setattr(scoring.data, "_read_table", counting)
    return reads


def figures(study) -> list[tuple]:
    rows = Report.objects.filter(study=study).order_by("population", "metric", "id")
    return [(r.population, r.metric, r.group, r.value, r.n, r.ci_low, r.ci_high, r.details) for r in rows]


def item_columns(study):
    with one_snapshot():
        return load_study_data(study, report_for(study.kind), by=DEFAULT_BY).items


def cache_state(study) -> tuple[int, int | None]:
    row = ItemColumns.objects.get(study=study)
    return row.version, row.blob_version


def test_reports_are_the_same_read_from_the_items_and_from_the_blob(item_reads, monkeypatch):
    study = game_study()
    with monkeypatch.context() as uncached:
        uncached.setattr(scoring.data, "cached_item_columns", lambda study, fields, read: read())
        compute_study_reports(study)
    direct = figures(study)
    assert cache_state(study)[1] is None
    compute_study_reports(study)  # reads the items, stores the blob
    assert figures(study) == direct
    compute_study_reports(study)  # from the blob
    assert item_reads == [1, 1]
    version, blob_version = cache_state(study)
    assert blob_version == version
    assert figures(study) == direct


def test_the_blob_gives_back_the_columns_as_read(item_reads):
    study = game_study()
    read = item_columns(study)
    cached = item_columns(study)
    assert item_reads == [1]
    assert list(cached.data) == list(read.data)
    for name, values in read.data.items():
        assert cached[name].dtype == values.dtype
        if values.dtype.kind == "O":
            assert cached[name].tolist() == values.tolist()
        else:
            np.testing.assert_array_equal(cached[name], values)
    assert decode(encode(read)).data.keys() == read.data.keys()


def test_the_blob_gives_each_text_column_its_factorisation(item_reads):
    study = game_study()
    item_columns(study)
    cached = item_columns(study)
    texts = [name for name, values in cached.data.items() if values.dtype.kind == "O"]
    assert texts and set(cached.codes) == set(texts)  # known without factorising
    for name in texts:
        labels, codes = cached.factorized(name)
        expected_labels, expected_codes = factorize(cached[name])
        assert labels.tolist() == expected_labels.tolist()
        assert codes.tolist() == expected_codes.tolist()


def test_an_item_insert_update_or_delete_gives_a_new_version(item_reads):
    study = game_study()
    item_columns(study)
    item = Item.objects.get(study=study, external_id="A")

    ItemFactory(study=study, external_id="E", payload={"sentences": ["S."] * 10, "boundary": 4})
    version, blob_version = cache_state(study)
    assert version > blob_version
    assert len(item_columns(study)) == 6  # read again, with the new item
    assert item_reads == [1, 1]

    item.payload = {**item.payload, "boundary": 7}
    item.save()
    assert 7 in item_columns(study)["boundary"]
    Item.objects.filter(pk=item.pk).update(provenance={"system": "edited"})
    assert "edited" in item_columns(study)["system"].tolist()
    Item.objects.filter(external_id="E").delete()
    assert len(item_columns(study)) == 5
    assert item_reads == [1] * 5
    item_columns(study)
    assert item_reads == [1] * 5  # and then from the blob again


def test_reports_follow_an_edited_boundary():
    study = game_study()
    compute_study_reports(study)
    before = Report.objects.get(study=study, population="all", metric="boundary.mean_distance", group={})
    edited = {"sentences": ["S."] * 10, "boundary": 1}
    Item.objects.filter(study=study, external_id="A").update(payload=edited)
    compute_study_reports(study)
    after = Report.objects.get(study=study, population="all", metric="boundary.mean_distance", group={})
    assert after.value > before.value


def test_slots_taken_never_changes_the_version(item_reads):
    study = game_study()
    item_columns(study)
    state = cache_state(study)
    Item.objects.filter(study=study).update(slots_taken=F("slots_taken") + 1)
    item = Item.objects.get(study=study, external_id="A")
    item.slots_taken += 1
    item.save()  # every column written, only slots_taken changed
    assert cache_state(study) == state
    item_columns(study)
    assert item_reads == [1]


def test_one_transaction_bumps_the_version_once_until_a_blob_is_stored():
    study = game_study()
    item_columns(study)
    version = cache_state(study)[0]
    for item in Item.objects.filter(study=study):
        item.explanation = "edited"
        item.save()
    assert cache_state(study)[0] == version + 1
    item_columns(study)  # stored again: the next change in this transaction bumps again
    Item.objects.filter(study=study, external_id="A").update(gold={"boundary": 3})
    assert cache_state(study)[0] == version + 2


def test_the_trigger_watches_every_item_column_but_the_picks_own():
    """``slots_taken`` (every page handed out) and ``priority`` (an adaptive study's, written
    by the reports job and lowered by each pick) change no figure: watching them would throw
    the cached columns away on every page."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'scoring_item_changed'")
        definition = cursor.fetchone()[0]
    watched = definition.split(" UPDATE OF ", 1)[1].split(" ON ", 1)[0].split(", ")
    columns = {field.column for field in Item._meta.concrete_fields}
    assert set(watched) == columns - {"slots_taken", "priority"}
    assert "slots_taken" not in definition and "priority" not in definition


def test_without_postgresql_nothing_is_cached(monkeypatch):
    study = game_study()
    monkeypatch.setattr(connection, "vendor", "sqlite")
    scoring.data.cached_item_columns(study, {}, lambda: scoring.data.Columns({"id": np.zeros(0)}))
    assert cache_state(study)[1] is None


# --- items changing while a reports run reads them ------------------------------------


def in_another_connection(work) -> threading.Thread:
    """Run ``work`` on a thread with its own connection (autocommit: committed when done)."""

    def run():
        try:
            work()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def read_while(study, monkeypatch, change) -> None:
    """A reports read of ``study`` during which ``change`` runs right after the items are read."""
    original = scoring.data._read_table

    def reading(query, fields, **kwargs):
        columns = original(query, fields, **kwargs)
        if query.model is Item:
            change()
        return columns

    monkeypatch.setattr(scoring.data, "_read_table", reading)
    item_columns(study)
    monkeypatch.setattr(scoring.data, "_read_table", original)


@pytest.mark.parametrize("outer", ["snapshot", "read committed"])
@pytest.mark.django_db(transaction=True)
def test_no_blob_is_stored_when_an_item_change_commits_during_the_read(monkeypatch, outer):
    """In the reports' own snapshot, and inside a caller's read-committed transaction
    (which then decides the isolation: each query sees the latest commits)."""
    study = game_study()
    moved = Item.objects.get(study=study, external_id="A")

    def change():
        edit = lambda: Item.objects.filter(pk=moved.pk).update(payload={"sentences": ["S."], "boundary": 9})  # noqa: E731
        in_another_connection(edit).join()

    with transaction.atomic() if outer == "read committed" else nullcontext():
        read_while(study, monkeypatch, change)
    assert cache_state(study)[1] is None
    assert 9 in item_columns(study)["boundary"]
    assert cache_state(study)[1] == cache_state(study)[0]


@pytest.mark.django_db(transaction=True)
def test_no_blob_is_stored_while_an_item_change_is_in_progress(monkeypatch):
    study = game_study()
    started, finish = threading.Event(), threading.Event()

    def edit():
        with transaction.atomic():
            Item.objects.filter(study=study, external_id="B").delete()
            started.set()
            finish.wait(30)

    writers: list[threading.Thread] = []

    def change():
        writers.append(in_another_connection(edit))
        assert started.wait(30)

    read_while(study, monkeypatch, change)
    assert writers[0].is_alive()  # the store did not wait for the writer...
    assert cache_state(study)[1] is None  # ... nor store
    finish.set()
    writers[0].join()
    assert len(item_columns(study)) == 4
    assert not Response.objects.filter(item__external_id="B").exists()
