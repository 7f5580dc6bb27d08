"""One composite key from a response to its assignment in place of four single ones.

A response copies its assignment's study, item and participant. The foreign keys of its
four columns are replaced on PostgreSQL by one: (assignment, study, item, participant)
refers to the assignment's unique (item, participant, study, id), so the assignment exists
and the copies cannot differ from it, and a submit's commit checks one key instead of
four (docs/architecture.md, "One key check per answer"). Deferred to commit, as Django's
own keys are. On SQLite (the embedded runtime) the services alone keep the four columns.

Also: an assignment's study has no index of its own any more; (study, status, expires_at)
serves its look-ups, and the planner, given the choice, swept a study's expired pages
through the one-column index, reading every page of the study.
"""

import django.db.models.deletion
from django.db import migrations, models


COMPOSITE_KEY = (
    "ALTER TABLE annotation_response ADD CONSTRAINT response_same_as_assignment "
    "FOREIGN KEY (assignment_id, study_id, item_id, participant_id) "
    "REFERENCES annotation_assignment (id, study_id, item_id, participant_id) "
    "DEFERRABLE INITIALLY DEFERRED"
)


def add_composite_key(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(COMPOSITE_KEY)


def drop_composite_key(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE annotation_response DROP CONSTRAINT response_same_as_assignment")


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0018_study_language'),
    ]

    operations = [
        migrations.AlterField(
            model_name='assignment',
            name='study',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='assignments', to='annotation.study'),
        ),
        migrations.AlterField(
            model_name='response',
            name='assignment',
            field=models.OneToOneField(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='response', to='annotation.assignment'),
        ),
        migrations.AlterField(
            model_name='response',
            name='item',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='responses', to='annotation.item'),
        ),
        migrations.AlterField(
            model_name='response',
            name='participant',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='responses', to='annotation.participant'),
        ),
        migrations.AlterField(
            model_name='response',
            name='study',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='responses', to='annotation.study'),
        ),
        migrations.AddConstraint(
            model_name='assignment',
            constraint=models.UniqueConstraint(fields=('item', 'participant', 'study', 'id'), name='assignment_response_key'),
        ),
        migrations.RunPython(add_composite_key, drop_composite_key),
    ]
