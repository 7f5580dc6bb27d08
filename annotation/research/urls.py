"""Researchers' pages under /research/ (the dashboard is in scoring.urls)."""

from django.urls import path

from .views import (
    adjudication,
    builder,
    docs,
    exports,
    invitations,
    jobs,
    judges,
    participants,
    platforms,
    studies,
    versions,
)

urlpatterns = [
    path("", studies.study_list, name="research-home"),
    path("jobs/", jobs.jobs_page, name="research-jobs"),
    path("invitations/", invitations.invitation_list, name="research-invitations"),
    path("join/", invitations.researcher_join, name="researcher-join"),
    path("join/<str:token>/", invitations.researcher_join_old_link, name="researcher-join-old-link"),
    path("docs/<slug:name>/", docs.research_doc, name="research-doc"),
    path("jobs/<int:job_id>/", jobs.job_row, name="research-job-row"),
    path("studies/new/", studies.study_new, name="research-study-new"),
    path("builder/", builder.builder_new, name="research-builder-new"),
    path("builder/preview/", builder.builder_preview, name="research-builder-preview"),
    path("s/<slug:slug>/edit/", builder.builder_edit, name="research-builder-edit"),
    path("s/<slug:slug>/study-file/", builder.study_file, name="research-study-file"),
    path("s/<slug:slug>/", studies.study_overview, name="research-study"),
    path("s/<slug:slug>/progress/", studies.study_progress, name="research-study-progress"),
    path("s/<slug:slug>/versions/", versions.version_list, name="research-versions"),
    path("s/<slug:slug>/versions/freeze/", versions.freeze, name="research-freeze"),
    path(
        "s/<slug:slug>/versions/<int:number>/study-file/",
        versions.version_file,
        name="research-version-file",
    ),
    path("s/<slug:slug>/status/", studies.study_status, name="research-study-status"),
    path("s/<slug:slug>/sharing/", studies.study_sharing, name="research-study-sharing"),
    path("s/<slug:slug>/preview/", studies.study_preview, name="research-study-preview"),
    path(
        "s/<slug:slug>/test-answers/discard/",
        studies.study_discard_tests,
        name="research-study-discard-tests",
    ),
    path("s/<slug:slug>/participants/", participants.participant_list, name="research-participants"),
    path(
        "s/<slug:slug>/participants/for-<str:source>.csv",
        participants.platform_list,
        name="research-platform-list",
    ),
    path("s/<slug:slug>/participants/find/", participants.participant_find, name="research-participant-find"),
    path(
        "s/<slug:slug>/participants/<str:public_id>/",
        participants.participant_detail,
        name="research-participant",
    ),
    path("s/<slug:slug>/adjudication/", adjudication.adjudication_list, name="research-adjudication"),
    path(
        "s/<slug:slug>/adjudication/<int:item_id>/",
        adjudication.adjudication_item,
        name="research-adjudication-item",
    ),
    path("s/<slug:slug>/exports/", exports.export_list, name="research-exports"),
    path("s/<slug:slug>/platforms/", platforms.platform_page, name="research-platforms"),
    path("s/<slug:slug>/judges/", judges.judge_page, name="research-judges"),
    path("s/<slug:slug>/judges/key/", judges.judge_key, name="research-judge-key"),
    path("s/<slug:slug>/judges/start/", judges.judge_start, name="research-judge-start"),
    path(
        "s/<slug:slug>/platforms/settings/",
        platforms.platform_settings,
        name="research-platform-settings",
    ),
    path(
        "s/<slug:slug>/platforms/<str:platform>/<str:action>/",
        platforms.platform_action,
        name="research-platform-action",
    ),
    path("s/<slug:slug>/exports/table/", exports.export_table, name="research-exports-table"),
    path(
        "s/<slug:slug>/exports/<int:export_id>/download/",
        exports.export_download,
        name="research-export-download",
    ),
]
