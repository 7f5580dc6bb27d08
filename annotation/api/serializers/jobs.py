"""Background jobs: start one of the registered kinds, follow its progress."""

from __future__ import annotations

from rest_framework import serializers

from annotation.models import Job


class JobOut(serializers.ModelSerializer):
    study = serializers.CharField(source="study.slug", default=None, allow_null=True)
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    percent = serializers.IntegerField()

    class Meta:
        model = Job
        fields = [
            "id", "kind", "study", "parameters", "status", "progress_done", "progress_total", "percent",
            "message", "result", "error", "created_by", "created_at", "started_at", "finished_at",
        ]  # fmt: skip


class JobIn(serializers.Serializer):
    kind = serializers.CharField(max_length=40, help_text="A registered job kind (GET /api/v1/job-kinds/).")
    study = serializers.SlugField(required=False, allow_null=True, default=None)
    parameters = serializers.DictField(required=False, default=dict)


class JobFilter(serializers.Serializer):
    study = serializers.SlugField(required=False)
    kind = serializers.CharField(required=False)
    status = serializers.ChoiceField(choices=Job.Status.choices, required=False)


class JobKindOut(serializers.Serializer):
    name = serializers.CharField()
    queue = serializers.CharField()
    parameters = serializers.ListField(child=serializers.CharField(), help_text="Parameter names it accepts.")
