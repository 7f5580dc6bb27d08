"""The ``export`` job: write a study's CSV, JSONL or SQLite export to the shared export folder."""

from __future__ import annotations

from annotation.models import Job
from annotation.services.exports.export import (
    ExportParameters,
    check_export_request,
    export_path,
    export_study,
)
from annotation.services.jobs import Progress

from .base import job_study, job_task


@job_task("workers.tasks.exports.export_study_task")
def export_study_task(job: Job, parameters: ExportParameters, progress: Progress) -> dict:
    """Stream the study's rows to a file, reporting progress; the result names the file."""
    study = job_study(job)
    # Checked again here: a job started by any route must not leak platform ids.
    check_export_request(job.created_by, study, include_platform_ids=parameters.include_platform_ids)
    path = export_path(job)
    result = export_study(
        study,
        fmt=parameters.format,
        path=path,
        include_platform_ids=parameters.include_platform_ids,
        progress=progress,
    )
    return {"file": path.name, "rows": result.rows, "bytes": result.bytes, "format": parameters.format}
