"""One composite key from an assignment to its item in place of two single ones.

An assignment copies its item's study. The foreign keys of its study and item columns are
replaced on PostgreSQL by one: (item, study) refers to the item's unique (id, study), so
the item exists and the page's study is the item's own (the item's key to its study keeps
the study), and a page handed out checks one key at commit instead of two
(docs/architecture.md, "One key check per answer"). Deferred to commit, as Django's own
keys are. On SQLite (the embedded runtime) the services alone keep the study the item's.
"""

import django.db.models.deletion
from django.db import migrations, models


COMPOSITE_KEY = (
    "ALTER TABLE annotation_assignment ADD CONSTRAINT assignment_same_study_as_item "
    "FOREIGN KEY (item_id, study_id) REFERENCES annotation_item (id, study_id) "
    "DEFERRABLE INITIALLY DEFERRED"
)


def add_composite_key(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(COMPOSITE_KEY)


def drop_composite_key(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "ALTER TABLE annotation_assignment DROP CONSTRAINT assignment_same_study_as_item"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0020_live_page_names_its_participant"),
    ]

    operations = [
        migrations.AlterField(
            model_name="assignment",
            name="item",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="assignments",
                to="annotation.item",
            ),
        ),
        migrations.AlterField(
            model_name="assignment",
            name="study",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="assignments",
                to="annotation.study",
            ),
        ),
        migrations.AddConstraint(
            model_name="item",
            constraint=models.UniqueConstraint(fields=("id", "study"), name="item_assignment_key"),
        ),
        migrations.RunPython(add_composite_key, drop_composite_key),
    ]
