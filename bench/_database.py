"""What the benchmark scripts share: the scratch database they build their data in."""

from __future__ import annotations


def ensure_database(url: str) -> None:
    """Create the database named at the end of ``url`` (a PostgreSQL URL) if it is missing."""
    import psycopg
    from psycopg import sql

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


# The tables the export and reports benches fill and read.
STUDY_TABLES = (
    "annotation_item",
    "annotation_participant",
    "annotation_enrollment",
    "annotation_assignment",
    "annotation_response",
)


def settle_tables(tables=STUDY_TABLES) -> None:
    """VACUUM ANALYZE ``tables`` on Django's connection (outside a transaction). A freshly
    loaded table's first scan sets every row's hint bits and writes its pages back: that
    cost would fall on whichever figure reads first, and not on its anchor. Quick when
    nothing changed."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"VACUUM ANALYZE {table}")


def copy_rows_like(template, varying: tuple[str, ...], rows) -> None:
    """Insert rows of ``template``'s model with ``COPY … FROM STDIN``: each row is the
    template's values (an unsaved instance, prepared by its fields as ``save()`` would)
    with the columns named in ``varying`` set from one tuple of ``rows``.

    For the bench's bulk data: ``bulk_create`` spent most of its time preparing every
    field of every row (20,000 pages of a used site took 5 of ``make_history``'s 6 CPU
    seconds, which ``tests/integration/test_rows_read.py`` paid once per test)."""
    from django.db import connection

    from annotation.services.db.pgcopy import copy_from

    model = type(template)
    fields = [field for field in model._meta.concrete_fields if field is not model._meta.pk]
    base = [field.get_db_prep_save(field.pre_save(template, True), connection) for field in fields]
    columns = [field.column for field in fields]
    where = [columns.index(column) for column in varying]

    def filled(values) -> list:
        row = list(base)
        for position, value in zip(where, values, strict=True):
            row[position] = value
        return row

    with connection.cursor() as cursor:
        copy_from(cursor, model._meta.db_table, columns, (filled(values) for values in rows))
