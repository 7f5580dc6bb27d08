"""A hand-written statement: composed from the models' names, quoted, with PostgreSQL's own
clauses (row locks) only on PostgreSQL."""

from types import SimpleNamespace

from psycopg import sql

from annotation.models import Item
from annotation.services.db import sql_rows


def test_a_statement_composed_from_a_models_names_quotes_them():
    query = sql.SQL("SELECT {columns} FROM {items} i WHERE i.id = %s").format(
        columns=sql_rows.columns(Item, "i")[1], items=sql_rows.table(Item)
    )
    statement = sql_rows.Statement("example", query)
    assert statement.sql.startswith('SELECT "i"."id", "i"."study_id", ')
    assert statement.sql.endswith(' FROM "annotation_item" i WHERE i.id = %s')


def test_a_lock_clause_is_postgresqls_only(monkeypatch):
    monkeypatch.setattr(sql_rows, "connection", SimpleNamespace(vendor="postgresql"))
    assert sql_rows.on_postgresql("FOR UPDATE").as_string(None) == "FOR UPDATE"
    monkeypatch.setattr(sql_rows, "connection", SimpleNamespace(vendor="sqlite"))
    assert sql_rows.on_postgresql("FOR UPDATE").as_string(None) == ""
