"""The SQLite export's ``spans`` table: one row per error span of a questionnaire's
``spans`` questions (kinds/spans.py), with the text it covers, read by the database from the
answers (a lateral expansion of each answer's JSON; no Python step per span).

Only the keys of a spans question are expanded: the question's definition in the study's
config names the passage the offsets point into. Offsets are characters (``end``
exclusive), as stored; ``text`` is ``substr`` of the passage (databases count characters).
"""

from __future__ import annotations

from django.db import connection

from annotation.models import Study
from annotation.services.populations import not_a_test_sql

from .columns import ITEM, RESPONSE_ID, Column
from .selects import dialect, table_names


def span_columns(participant: Column) -> list[Column]:
    start, end = _number("sp.span", "start"), _number("sp.span", "end")
    return [
        RESPONSE_ID,
        ITEM,
        participant,
        Column("question", "text", "q.question", "The spans question's id."),
        Column("span", "integer", "sp.n", "The span's number within the answer (1, 2, …, by start)."),
        Column("start", "integer", start, "First character of the span (0-based offset into the passage)."),
        Column("end", "integer", end, "One past the span's last character."),
        Column("category", "text", _text("sp.span", "category"), "The error category."),
        Column("severity", "text", _text("sp.span", "severity"), "The error severity."),
        Column("passage", "text", _text("pa.passage", "id"), "The id of the passage the span is in."),
        Column("system", "text", _text("pa.passage", "system"), "The system of that passage."),
        Column(
            "text",
            "text",
            f"substr({_text('pa.passage', 'text')}, {start} + 1, {end} - {start})",
            "What it covers.",
        ),
    ]


def _covered(start: str, end: str) -> str:
    return f"substr({_text('pa.passage', 'text')}, {start} + 1, {end} - {start})"


def _text(document: str, key: str) -> str:
    return f"({document} ->> '{key}')"


def _number(document: str, key: str) -> str:
    return f"CAST({_text(document, key)} AS INTEGER)"


def span_source() -> str:
    """What follows ``SELECT <columns>``: answers × their spans questions × their spans."""
    t = table_names() | {"st": Study._meta.db_table}
    ps = dialect().pseudonyms
    head = (
        f"FROM {t['r']} r JOIN {t['i']} i ON i.id = r.item_id JOIN {t['st']} st ON st.id = r.study_id "
        f"JOIN {ps} ps ON ps.participant_id = r.participant_id "
    )
    tail = f"WHERE r.study_id = %s AND st.kind = 'questionnaire' AND {not_a_test_sql('r')} "
    order = "ORDER BY r.id, q.question, sp.n"
    if connection.vendor == "postgresql":
        spans = "r.answer -> q.question -> 'spans'"
        joins = (
            "CROSS JOIN LATERAL (SELECT qd ->> 'id' AS question, "  # noqa: S608 - our own names
            "CAST(qd ->> 'passage' AS INTEGER) AS number "
            "FROM jsonb_array_elements(st.config -> 'questions') qd WHERE qd ->> 'type' = 'spans') q "
            "CROSS JOIN LATERAL (SELECT i.payload -> 'passages' -> (q.number - 1) AS passage) pa "
            f"CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof({spans}) = 'array' "
            f"THEN {spans} ELSE '[]'::jsonb END) WITH ORDINALITY sp(span, n) "
        )
        return head + joins + tail + order
    joins = (
        "JOIN (SELECT st2.id AS study, json_extract(qd.value, '$.id') AS question, "  # noqa: S608
        "json_extract(qd.value, '$.passage') AS number "
        f"FROM {t['st']} st2, json_each(st2.config, '$.questions') qd "
        "WHERE json_extract(qd.value, '$.type') = 'spans') q ON q.study = st.id "
        "JOIN (SELECT i2.id AS item, p.key AS position, p.value AS passage "
        f"FROM {t['i']} i2, json_each(i2.payload, '$.passages') p) pa "
        "ON pa.item = i.id AND pa.position = q.number - 1 "
        "JOIN (SELECT r2.id AS response, je.key AS question, s2.key + 1 AS n, s2.value AS span "
        f"FROM {t['r']} r2, json_each(r2.answer) je, "
        "json_each(CASE WHEN je.type = 'object' THEN je.value ELSE '{}' END, '$.spans') s2) sp "
        "ON sp.response = r.id AND sp.question = q.question "
    )
    return head + joins + tail + order
