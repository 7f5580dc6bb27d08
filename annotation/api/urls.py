"""/api/v1/ — annotation's routes of the researchers' API. ``roft_site/api_urls.py`` joins them
with ``scoring``'s (the reports) under the namespace ``api``."""

from django.urls import path

from .views import exports, items, jobs, participants, responses, studies, tokens

urlpatterns = [
    path("auth/token/", tokens.TokenView.as_view(), name="token"),
    path("studies/", studies.StudyListView.as_view(), name="study-list"),
    path("studies/<slug:slug>/", studies.StudyDetailView.as_view(), name="study-detail"),
    path("studies/<slug:slug>/status/", studies.StudyStatusView.as_view(), name="study-status"),
    path("studies/<slug:slug>/freeze/", studies.StudyFreezeView.as_view(), name="study-freeze"),
    path("studies/<slug:slug>/versions/", studies.StudyVersionListView.as_view(), name="study-versions"),
    path(
        "studies/<slug:slug>/versions/<int:number>/study-file/",
        studies.StudyVersionFileView.as_view(),
        name="study-version-file",
    ),
    path("studies/<slug:slug>/items/", items.ItemListView.as_view(), name="item-list"),
    path(
        "studies/<slug:slug>/participants/",
        participants.ParticipantListView.as_view(),
        name="participant-list",
    ),
    path(
        "studies/<slug:slug>/participants/returned/",
        participants.ReturnedView.as_view(),
        name="participant-returned",
    ),
    path(
        "studies/<slug:slug>/participants/<str:public_id>/erase/",
        participants.ErasureView.as_view(),
        name="participant-erase",
    ),
    path(
        "studies/<slug:slug>/participants/<str:public_id>/",
        participants.ParticipantDetailView.as_view(),
        name="participant-detail",
    ),
    path("studies/<slug:slug>/exports/", exports.ExportListView.as_view(), name="export-list"),
    path(
        "studies/<slug:slug>/exports/<int:export_id>/",
        exports.ExportDetailView.as_view(),
        name="export-detail",
    ),
    path(
        "studies/<slug:slug>/exports/<int:export_id>/download/",
        exports.ExportDownloadView.as_view(),
        name="export-download",
    ),
    path("responses/", responses.ResponseListView.as_view(), name="response-list"),
    path("jobs/", jobs.JobListView.as_view(), name="job-list"),
    path("job-kinds/", jobs.JobKindListView.as_view(), name="job-kind-list"),
    path("jobs/<int:job_id>/", jobs.JobDetailView.as_view(), name="job-detail"),
    path("jobs/<int:job_id>/cancel/", jobs.JobCancelView.as_view(), name="job-cancel"),
]
