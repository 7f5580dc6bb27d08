"""Participant pages."""

from django.urls import path

from .views import jobs, participant

urlpatterns = [
    path("s/<slug:slug>/", participant.study_entry, name="study-entry"),
    path("s/<slug:slug>/consent/", participant.study_consent, name="study-consent"),
    path("s/<slug:slug>/task/", participant.study_task, name="study-task"),
    path("s/<slug:slug>/a/<str:assignment_id>/", participant.study_submit, name="study-submit"),
    path("s/<slug:slug>/done/", participant.study_done, name="study-done"),
    path("s/<slug:slug>/instructions/", participant.study_instructions, name="study-instructions"),
    path("research/jobs/", jobs.jobs_page, name="research-jobs"),
    path("research/jobs/status/", jobs.jobs_status, name="research-jobs-status"),
]
