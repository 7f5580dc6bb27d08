"""The transactional tests' flush (tests/fast_flush.py) empties every table as TRUNCATE did,
foreign keys checked, but the content types and permissions, which it keeps as they are; and
still truncates when Django asks for sequences reset."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection

from annotation.models import Participant
from annotation.services.access import RESEARCHERS_GROUP
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.factories import ParticipantFactory
from tests.helpers.flow import answer_pages
from tests.integration.test_query_counts import SUPPORTS

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's flush"),
]


def test_the_flush_deletes_rows_and_truncates_only_when_sequences_are_reset():
    tables = ["annotation_study", "annotation_item"]
    plain = connection.ops.sql_flush(no_style(), tables)
    assert plain == [
        "SET CONSTRAINTS ALL DEFERRED;",
        'DELETE FROM "annotation_study";',
        'DELETE FROM "annotation_item";',
    ]
    reset = connection.ops.sql_flush(no_style(), tables, reset_sequences=True)
    assert reset[0].startswith("TRUNCATE") and "RESTART IDENTITY" in reset[0]
    schema = ["django_content_type", "auth_permission"]
    assert connection.ops.sql_flush(no_style(), [*schema, *tables]) == plain
    assert not any(table in reset[0] for table in schema)
    assert connection.ops.sql_flush(no_style(), schema) == []


def test_a_flush_leaves_every_table_empty_whatever_refers_to_what():
    study = load_study_file(claim_study_file(items=4)).study
    answer_pages(study, ParticipantFactory(enrolled_in=study), SUPPORTS, 2)
    assert Participant.objects.exists()
    schema_rows = {
        model: set(model.objects.values_list("pk", flat=True)) for model in (ContentType, Permission)
    }
    assert all(schema_rows.values())
    # As a transactional test's teardown calls it (django.test.TransactionTestCase).
    call_command("flush", verbosity=0, interactive=False, reset_sequences=False)
    # The content types and permissions are the same rows (not written again under new ids);
    # the post_migrate handlers write back the researchers group (annotation/apps.py).
    assert {model: set(model.objects.values_list("pk", flat=True)) for model in schema_rows} == schema_rows
    assert list(Group.objects.values_list("name", flat=True)) == [RESEARCHERS_GROUP]
    refilled = {"contenttypes.ContentType", "auth.Permission", "auth.Group"}
    for model in apps.get_models():
        if model._meta.managed and not model._meta.proxy and model._meta.label not in refilled:
            assert not model.objects.exists(), model._meta.label
