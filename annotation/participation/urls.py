"""The participant's pages: the study link, consent, the pages, the exam, leaving, the code;
and the pages each kind adds (the game's rounds and ``/play/``)."""

from django.urls import URLPattern, URLResolver, include, path

from annotation.kinds import all_kinds

from .views import exam, leave, participant

urlpatterns: list[URLPattern | URLResolver] = [
    path("s/<slug:slug>/", participant.study_entry, name="study-entry"),
    path("s/<slug:slug>/consent/", participant.study_consent, name="study-consent"),
    path("s/<slug:slug>/task/", participant.study_task, name="study-task"),
    path("s/<slug:slug>/a/<str:assignment_id>/", participant.study_submit, name="study-submit"),
    path("s/<slug:slug>/done/", participant.study_done, name="study-done"),
    path("s/<slug:slug>/instructions/", participant.study_instructions, name="study-instructions"),
    path("s/<slug:slug>/leave/", leave.study_leave, name="study-leave"),
    path("s/<slug:slug>/exam/", exam.exam_page, name="study-exam"),
    path("s/<slug:slug>/exam/a/<str:assignment_id>/", exam.exam_submit, name="study-exam-submit"),
    path("s/<slug:slug>/exam/retry/", exam.exam_retry, name="study-exam-retry"),
    path(
        "s/<slug:slug>/exam/a/<str:assignment_id>/feedback/", exam.exam_feedback, name="study-exam-feedback"
    ),
]

# Kinds with extra steps (the game's sentence reveal) add pages under their assignment.
urlpatterns += [
    path(f"s/<slug:slug>/a/<str:assignment_id>/{name}/", include(kind.urls))
    for name, kind in all_kinds().items()
    if kind.urls
]

# Kinds with pages of their own on the site (the game's /play/) add them at the root.
urlpatterns += [pattern for kind in all_kinds().values() for pattern in kind.site_urls]
