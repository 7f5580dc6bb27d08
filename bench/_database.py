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
