"""Researchers' pages under /research/ (the dashboard is in scoring.urls)."""

from django.urls import path

from .views import (
    invitations,
    jobs,
    research_adjudication,
    research_builder,
    research_docs,
    research_exports,
    research_participants,
    research_platforms,
    research_studies,
)

urlpatterns = [
    path("", research_studies.study_list, name="research-home"),
    path("jobs/", jobs.jobs_page, name="research-jobs"),
    path("invitations/", invitations.invitation_list, name="research-invitations"),
    path("join/", invitations.researcher_join, name="researcher-join"),
    path("join/<str:token>/", invitations.researcher_join_old_link, name="researcher-join-old-link"),
    path("docs/<slug:name>/", research_docs.research_doc, name="research-doc"),
    path("jobs/<int:job_id>/", jobs.job_row, name="research-job-row"),
    path("studies/new/", research_studies.study_new, name="research-study-new"),
    path("builder/", research_builder.builder_new, name="research-builder-new"),
    path("builder/preview/", research_builder.builder_preview, name="research-builder-preview"),
    path("s/<slug:slug>/edit/", research_builder.builder_edit, name="research-builder-edit"),
    path("s/<slug:slug>/study-file/", research_builder.study_file, name="research-study-file"),
    path("s/<slug:slug>/", research_studies.study_overview, name="research-study"),
    path("s/<slug:slug>/progress/", research_studies.study_progress, name="research-study-progress"),
    path("s/<slug:slug>/status/", research_studies.study_status, name="research-study-status"),
    path("s/<slug:slug>/preview/", research_studies.study_preview, name="research-study-preview"),
    path(
        "s/<slug:slug>/test-answers/discard/",
        research_studies.study_discard_tests,
        name="research-study-discard-tests",
    ),
    path("s/<slug:slug>/participants/", research_participants.participant_list, name="research-participants"),
    path(
        "s/<slug:slug>/participants/for-<str:source>.csv",
        research_participants.platform_list,
        name="research-platform-list",
    ),
    path(
        "s/<slug:slug>/participants/<str:public_id>/",
        research_participants.participant_detail,
        name="research-participant",
    ),
    path(
        "s/<slug:slug>/adjudication/", research_adjudication.adjudication_list, name="research-adjudication"
    ),
    path(
        "s/<slug:slug>/adjudication/<int:item_id>/",
        research_adjudication.adjudication_item,
        name="research-adjudication-item",
    ),
    path("s/<slug:slug>/exports/", research_exports.export_list, name="research-exports"),
    path("s/<slug:slug>/platforms/", research_platforms.platform_page, name="research-platforms"),
    path(
        "s/<slug:slug>/platforms/settings/",
        research_platforms.platform_settings,
        name="research-platform-settings",
    ),
    path(
        "s/<slug:slug>/platforms/<str:platform>/<str:action>/",
        research_platforms.platform_action,
        name="research-platform-action",
    ),
    path("s/<slug:slug>/exports/table/", research_exports.export_table, name="research-exports-table"),
    path(
        "s/<slug:slug>/exports/<int:export_id>/download/",
        research_exports.export_download,
        name="research-export-download",
    ),
]
