"""Sharing by role (issue 39): a StudyShare row per researcher a study is shared with. The
shares made before roles meant reading and analysing, which is the analyst role, so each
becomes an analyst share; ``Study.shared_with`` then runs through the new table."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def shares_become_analysts(apps, schema_editor):
    Study = apps.get_model("annotation", "Study")
    StudyShare = apps.get_model("annotation", "StudyShare")
    Old = Study.shared_with.through
    StudyShare.objects.bulk_create(
        [StudyShare(study_id=row.study_id, user_id=row.user_id, role="analyst") for row in Old.objects.all()],
        ignore_conflicts=True,
    )


def shares_back(apps, schema_editor):
    """Undoing keeps who a study is shared with (every role becomes the old plain share)."""
    Study = apps.get_model("annotation", "Study")
    StudyShare = apps.get_model("annotation", "StudyShare")
    Old = Study.shared_with.through
    Old.objects.bulk_create(
        [Old(study_id=row.study_id, user_id=row.user_id) for row in StudyShare.objects.all()],
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0029_human_subset"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="StudyShare",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("owner", "Owner"),
                            ("analyst", "Analyst"),
                            ("operator", "Operator"),
                            ("viewer", "Viewer"),
                        ],
                        db_default="analyst",
                        default="analyst",
                        max_length=10,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "study",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="shares", to="annotation.study"
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="study_shares",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["study", "user__username"],
                "constraints": [
                    models.UniqueConstraint(fields=("study", "user"), name="one_share_per_study_and_user")
                ],
            },
        ),
        migrations.RunPython(shares_become_analysts, shares_back),
        migrations.RemoveField(model_name="study", name="shared_with"),
        migrations.AddField(
            model_name="study",
            name="shared_with",
            field=models.ManyToManyField(
                blank=True,
                help_text="Researchers the study is shared with besides its owner, each in a role (StudyShare).",
                related_name="shared_studies",
                through="annotation.StudyShare",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
    ]
