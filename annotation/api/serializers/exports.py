"""Exports are jobs of kind ``export``; their result names the file to download."""

from __future__ import annotations

from django.urls import reverse
from rest_framework import serializers

from annotation.models import Job
from annotation.services.exports import ExportParameters

from .jobs import JobOut


class ExportIn(ExportParameters):
    """``format`` csv, jsonl or sqlite (a zip with the database and a README)."""


class ExportOut(JobOut):
    download = serializers.SerializerMethodField(help_text="Where to fetch the file once the export is done.")

    class Meta(JobOut.Meta):
        fields = [*JobOut.Meta.fields, "download"]

    def get_download(self, job: Job) -> str | None:
        if job.status != Job.Status.DONE:
            return None
        return reverse("api:export-download", kwargs={"slug": job.study.slug, "export_id": job.pk})
