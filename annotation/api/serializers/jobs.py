"""Background jobs: start one of the registered kinds, follow its progress."""

from __future__ import annotations

from rest_framework import serializers

from annotation.models import Job
from annotation.services.jobs import job_details


class JobOut(serializers.Serializer):
    """``services.jobs.job_details``: the one shape of a job's state, as the pages show it,
    plus what was asked (``parameters``, ``created_by``, ``created_at``) and what came out."""

    id = serializers.IntegerField()
    kind = serializers.CharField()
    study = serializers.CharField(allow_null=True)
    parameters = serializers.JSONField()
    status = serializers.ChoiceField(choices=Job.Status.choices)
    status_label = serializers.CharField()
    finished = serializers.BooleanField(help_text="Done, failed or cancelled: it will not change again.")
    progress_done = serializers.IntegerField()
    progress_total = serializers.IntegerField()
    percent = serializers.IntegerField()
    message = serializers.CharField(allow_blank=True)
    result = serializers.JSONField()
    error = serializers.CharField(allow_blank=True)
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)

    def to_representation(self, job: Job) -> dict:
        return super().to_representation(job_details(job))


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
