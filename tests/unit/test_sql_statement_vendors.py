"""A hand-written statement's vendor parts: PostgreSQL's kept on PostgreSQL, SQLite's on SQLite."""

from annotation.services.sql_rows import Statement

STATEMENT = Statement(
    "example",
    "UPDATE t SET n = /*pg:GREATEST*//*lite:MAX*/(n - %s, 0) "
    "WHERE /*pg:ctid*//*lite:id*/ = %s /*pg:FOR UPDATE*/",
)


def test_postgresql_keeps_its_parts_and_drops_sqlites():
    expected = "UPDATE t SET n = GREATEST(n - %s, 0) WHERE ctid = %s FOR UPDATE"
    assert STATEMENT.for_vendor("postgresql") == expected


def test_sqlite_keeps_its_parts_and_drops_postgresqls():
    assert STATEMENT.for_vendor("sqlite") == "UPDATE t SET n = MAX(n - %s, 0) WHERE id = %s "
