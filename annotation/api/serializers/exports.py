"""Exports are jobs of kind ``export``; their result names the file to download."""

from __future__ import annotations

from django.urls import reverse
from rest_framework import serializers

from annotation.models import Job
from annotation.services.exports.export import ExportParameters

from .jobs import JobOut


class ExportIn(ExportParameters.Serializer):
    """``format`` csv, jsonl or sqlite (a zip with the database and a README)."""


class ExportOut(JobOut):
    download = serializers.CharField(
        allow_null=True, help_text="Where to fetch the file once the export is done."
    )

    def to_representation(self, job: Job) -> dict:
        shown = super().to_representation(job)
        if job.status != Job.Status.DONE or job.study is None:  # an export always has its study
            return shown | {"download": None}
        url = reverse("api:export-download", kwargs={"slug": job.study.slug, "export_id": job.pk})
        return shown | {"download": url}
