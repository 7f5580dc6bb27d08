"""The export's columns: one name, one type, one meaning and one SQL expression each.

Every export (CSV, JSONL, the SQLite dump) and every database backend reads the same
``Column`` lists (``docs/exports.md`` lists them); ``selects`` turns them into the SELECTs.
Which payload, provenance and answer fields become columns is found generically: the scalar
fields present in the study's item payloads and provenance, the fields the kind's ``Answer``
serializer declares, and the nested answer values the kind lists in ``export_fields``.

CSV cells are neutralised against formula injection (``neutralise`` here, its SQL twin
``selects.Dialect.neutral``, both from ``FORMULA_STARTS``): a text cell that starts with
``= + - @``, a tab or a carriage return gets a leading ``'``. Numeric columns are never
touched (``-3`` is data), and JSONL and SQLite keep exact text.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from annotation.models import Exam, ExamAttempt, Item, Participant, Study

SCALARS = (str, int, float, bool, type(None))
# OWASP's list of characters a spreadsheet reads as the start of a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(text: str) -> str:
    """A CSV text cell that a spreadsheet would run as a formula, made inert with a leading ``'``."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


@dataclass(frozen=True)
class Column:
    """An export column: its name, its type, the SQL that reads it, and what it means.

    ``type`` is text, integer, real, boolean, time (UTC ISO 8601 text), json (an object or
    list, JSON text in CSV and SQLite) or field (one value inside ``sql``'s JSON at
    ``path``: a string, number, boolean, list or object). Table aliases: r response,
    a assignment, i item, p participant, e enrollment, ps the pseudonyms.
    """

    name: str
    type: str
    sql: str
    description: str
    params: tuple = ()
    path: tuple[str, ...] = ()
    sqlite_type: str = ""

    @property
    def sqlite_declaration(self) -> str:
        if self.sqlite_type:
            return self.sqlite_type
        return {"integer": "INTEGER", "real": "REAL", "boolean": "INTEGER"}.get(self.type, "TEXT")


def participant_columns(include_platform_ids: bool, exam: Exam | None = None) -> list[Column]:
    """The participant's columns: the same in the CSV/JSONL rows and the SQLite ``participants``
    table; with ``exam`` (see ``exam_of``) their outcome in it too."""
    return [
        Column(
            "participant", "text", "ps.pseudonym", "The participant's pseudonym (salted hash, per study)."
        ),
        Column("participant_source", "text", "p.source", "organic, prolific, mturk, lab, expert or model."),
        *(
            [
                Column(
                    "platform_worker_id", "text", "p.platform_worker_id", "Crowd-platform id (admin exports)."
                )
            ]
            if include_platform_ids
            else []
        ),
        Column(
            "participant_status", "text", "e.status", "started, active, completed, screened_out or returned."
        ),
        Column(
            "answered_count", "integer", "e.answered_count", "Pages the participant answered in this study."
        ),
        Column("points_total", "real", "e.points_total", "Points the participant scored in this study."),
        Column("attention_passed", "integer", "e.attention_passed", "Attention checks passed in this study."),
        Column("attention_failed", "integer", "e.attention_failed", "Attention checks failed in this study."),
        Column("excluded", "boolean", "e.excluded", "true when a researcher excluded them from reports."),
        Column(
            "participant_flagged",
            "boolean",
            "COALESCE(e.flagged, FALSE)",
            "true when this study's checks or a researcher flagged them in this study.",
        ),
        Column(
            "participant_flag_reason",
            "text",
            "COALESCE(e.flag_reason, '')",
            "Why they were flagged in this study.",
        ),
        Column("participant_blocked", "boolean", "p.blocked", "true when blocked from the site."),
        Column("consented_at", "time", "e.consented_at", "When they consented (UTC, ISO 8601)."),
        Column("finished_at", "time", "e.finished_at", "When their session ended (UTC, ISO 8601)."),
        *(exam_columns(exam) if exam is not None else []),
    ]


def exam_of(study: Study) -> Exam | None:
    """The exam whose outcome a study's export shows: the study's own when it is an exam,
    else the one it requires; None when neither."""
    return Exam.objects.filter(study=study).first() or study.qualification


def exam_columns(exam: Exam) -> list[Column]:
    """Each participant's outcome in ``exam``: attempts, their last finished attempt's score,
    and whether they passed."""
    attempts = f"{ExamAttempt._meta.db_table} x WHERE x.exam_id = %s AND x.participant_id = p.id"
    last = f"FROM {attempts} AND x.finished_at IS NOT NULL ORDER BY x.number DESC LIMIT 1"
    return [
        Column(
            "exam_attempts",
            "integer",
            f"(SELECT COUNT(*) FROM {attempts})",  # noqa: S608 - our own table name
            "Attempts at the study's qualification exam (started ones too).",
            params=(exam.pk,),
        ),
        Column(
            "exam_correct",
            "integer",
            f"(SELECT x.correct_count {last})",
            "Questions right in their last finished attempt; empty when none finished.",
            params=(exam.pk,),
        ),
        Column(
            "exam_questions",
            "integer",
            f"(SELECT x.question_count {last})",
            "Questions in that attempt.",
            params=(exam.pk,),
        ),
        Column(
            "exam_passed",
            "boolean",
            f"EXISTS (SELECT 1 FROM {attempts} AND x.status = %s)",  # noqa: S608 - our own table name
            "true when they passed the exam (in any attempt).",
            params=(exam.pk, ExamAttempt.Status.PASSED.value),
        ),
    ]


RESPONSE_ID = Column("response_id", "integer", "r.id", "The response's id (unique per row).")
ITEM = Column("item", "text", "i.external_id", "The item's external_id, as in the study file.")
IS_ATTENTION_CHECK = Column(
    "is_attention_check", "boolean", "r.is_attention_check", "true when the item is an attention check."
)
RESPONSE_TAIL = [
    Column(
        "position", "integer", "a.position", "1-based page number of this item in the participant's session."
    ),
    Column("display_order", "json", "r.display_order", "What the kind recorded when it handed out the item."),
    Column("shown_at", "time", "r.shown_at", "When the page was first shown (UTC, ISO 8601)."),
    Column("answered_at", "time", "r.answered_at", "When the answer was stored (UTC, ISO 8601)."),
    Column("duration_seconds", "real", "r.duration_seconds", "Seconds from shown to answered."),
    Column("points", "real", "r.points", "Points scored against the truth, when the kind scores points."),
    Column("correct", "boolean", "r.correct", "true/false against gold or truth; empty when unscored."),
    Column(
        "too_fast",
        "boolean",
        "r.too_fast",
        "true when answered in less than the study's minimum time per page (kept, not rejected).",
    ),
    Column("score_details", "json", "r.score_details", "The kind's extra scoring figures (JSON)."),
    Column(
        "authenticity",
        "json",
        "r.authenticity",
        "How the answer's free text got into its fields: counts per field, never the text (JSON; "
        "docs/authenticity.md); empty where none were recorded.",
    ),
    Column(
        "strong_sign",
        "boolean",
        "r.strong_sign",
        "true when the authenticity signals show a strong sign the text was not typed on the page.",
    ),
    Column(
        "flagged",
        "boolean",
        "r.flagged",
        "true when the participant is flagged in this study (a copy of participant_flagged).",
    ),
    Column("imported", "boolean", "r.imported", "true when imported rather than answered on the site."),
    Column(
        "study_version",
        "integer",
        "r.study_version",
        "The study's version the answer was given under (its study file: the versions table, or the "
        "Versions page); empty: given before the study's versions were recorded.",
    ),
    Column(
        "adjudicated",
        "boolean",
        f"EXISTS (SELECT 1 FROM {Participant._meta.db_table} x "  # noqa: S608 - our own table name
        "WHERE x.id = r.participant_id AND x.source = %s)",
        "true for a researcher's adjudication (a final answer on a disagreement), not a participant's.",
        params=(Participant.Source.ADJUDICATOR.value,),
    ),
    Column("answer", "json", "r.answer", "The stored answer (JSON), in the kind's answer shape."),
]


def response_columns(study: Study, *, include_platform_ids: bool = False) -> list[Column]:
    """Every column of the study's CSV/JSONL export, in order."""
    answer_keys = list(study.task_kind.Answer().fields)
    payload_keys, provenance_keys = _item_scalar_keys(study)
    nested = study.task_kind.export_fields(study.config or {})
    return [
        RESPONSE_ID,
        Column("study", "text", "%s", "The study's slug.", params=(study.slug,)),
        Column("kind", "text", "%s", "The study's task kind.", params=(study.kind,)),
        Column(
            "plan_digest",
            "text",
            "%s",
            "SHA-256 of the study file and analysis plan as frozen; empty when the plan is not frozen.",
            params=(study.frozen_digest,),
        ),
        ITEM,
        IS_ATTENTION_CHECK,
        *participant_columns(include_platform_ids, exam_of(study)),
        *RESPONSE_TAIL,
        *[
            Column(f"answer.{k}", "field", "r.answer", "A field of the answer.", path=(k,))
            for k in answer_keys
        ],
        *[
            Column(name, "field", "r.answer", "A value inside the answer.", path=path)
            for name, path in nested
        ],
        *passage_columns(study),
        *[
            Column(f"payload.{k}", "field", "i.payload", "A scalar payload field.", path=(k,))
            for k in payload_keys
        ],
        *[
            Column(f"provenance.{k}", "field", "i.provenance", "A provenance field.", path=(k,))
            for k in provenance_keys
        ],
    ]


def _item_scalar_keys(study: Study) -> tuple[list[str], list[str]]:
    """Payload and provenance keys whose values are scalars in at least one item."""
    payload: dict[str, None] = {}  # dicts as ordered sets of keys
    provenance: dict[str, None] = {}
    for item_payload, item_provenance in (
        Item.objects.filter(study=study).values_list("payload", "provenance").iterator(chunk_size=2000)
    ):
        for target, values in ((payload, item_payload), (provenance, item_provenance)):
            for key, value in (values or {}).items():
                if isinstance(value, SCALARS):
                    target.setdefault(key, None)
    return list(payload), list(provenance)


# The passage shown under a letter: the ``n``-th id of the response's recorded order (the
# ``->`` and ``->>`` operators read JSON alike on PostgreSQL and SQLite ≥ 3.38).
_SHOWN = "(r.display_order -> 'order' ->> {n})"


def _by_id(document: str, key: str) -> str:
    """``document ->> key`` for a key computed in SQL (a passage id): on SQLite as a quoted
    path, since its ``->>`` reads a text label of digits only (``"1"``) as no key at all.
    Passage ids hold no quote (``PASSAGE_ID_PATTERN``)."""
    if connection.vendor == "postgresql":
        return f"({document} ->> {key})"
    return f"""({document} ->> ('$."' || {key} || '"'))"""


def passage_columns(study: Study) -> list[Column]:
    """A kind's columns that put each answer beside its passage's system (the
    questionnaire's ``passage_columns``), read from the response's recorded order and
    systems (``display_record``): for pages of as many passages as the study's largest
    item has; none for a kind without passages."""
    describe = getattr(study.task_kind, "passage_columns", None)
    if describe is None:
        return []
    width = _most_passages(study)
    columns = []
    for spec in describe(study.config or {}, width):
        shown = _SHOWN.format(n=int(spec.position))
        if spec.what == "passage":
            columns.append(Column(spec.name, "text", shown, "The passage id shown under this letter."))
        elif spec.what == "system":
            system = _by_id("(r.display_order -> 'systems')", shown)
            columns.append(Column(spec.name, "text", system, "The system of that passage."))
        elif spec.what == "answer":
            value = _by_id("(r.answer -> %s)", shown)
            sql = f"CAST({value} AS INTEGER)" if spec.type == "integer" else value
            columns.append(
                Column(
                    spec.name,
                    spec.type,
                    sql,
                    "This question's answer for that passage.",
                    params=(spec.question,),
                )
            )
        else:  # the system of the passage a pick chose
            picked = "(r.answer ->> %s)" if not spec.end else "((r.answer -> %s) ->> %s)"
            params = (spec.question,) if not spec.end else (spec.question, spec.end)
            columns.append(
                Column(
                    spec.name,
                    "text",
                    _by_id("(r.display_order -> 'systems')", picked),
                    "The system of the passage picked (empty for a tie).",
                    params=params,
                )
            )
    return columns


def _most_passages(study: Study) -> int:
    """The most passages an item of the study has (the texts are never read)."""
    length = (
        "jsonb_array_length(payload -> 'passages')"
        if connection.vendor == "postgresql"
        else "json_array_length(payload, '$.passages')"
    )
    table = Item._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT MAX({length}) FROM {table} WHERE study_id = %s", [study.pk])  # noqa: S608
        found = cursor.fetchone()[0]
    return int(found or 0)
