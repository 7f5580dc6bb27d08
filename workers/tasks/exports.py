"""The ``export`` job: write a study's CSV, JSONL or SQLite export to the shared export folder."""

from __future__ import annotations

from annotation.models import Job
from annotation.services.exports import check_export_request, export_path, export_study

from .base import job_task


@job_task("workers.tasks.exports.export_study_task")
def export_study_task(job: Job) -> dict:
    """Stream the study's rows to a file, reporting progress; the result names the file."""
    from workers.progress import JobProgress

    if job.study is None:
        raise ValueError("An export job needs a study.")
    include_ids = job.parameters.get("include_platform_ids", False)
    # Checked again here: a job started by any route must not leak platform ids.
    check_export_request(job.created_by, job.study, include_platform_ids=include_ids)
    path = export_path(job)
    result = export_study(
        job.study,
        fmt=job.parameters["format"],
        path=path,
        include_platform_ids=include_ids,
        progress=JobProgress(job.pk),
    )
    return {"file": path.name, "rows": result.rows, "bytes": result.bytes, "format": job.parameters["format"]}
