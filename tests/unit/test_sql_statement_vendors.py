"""A hand-written statement's vendor parts: PostgreSQL's kept on PostgreSQL, SQLite's on SQLite."""

from annotation.services.row_addresses import AddressedStatement
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


def test_an_addressed_statement_asks_at_the_address_then_by_key():
    statement = AddressedStatement("count", "UPDATE t SET n = n + %s WHERE /*address*/a = %s AND b = %s")
    assert statement.by_key.sql == "UPDATE t SET n = n + %s WHERE a = %s AND b = %s"
    assert statement.by_address.sql == "UPDATE t SET n = n + %s WHERE ctid = %s::tid AND a = %s AND b = %s"
    assert statement.address_position == 1  # the address goes after the SET's one parameter
