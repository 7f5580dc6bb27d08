"""Every page of both faces keeps its name and its address now that the participant's pages
live in ``annotation.participation`` and the researchers' in ``annotation.research``: each
``{% url %}`` in the templates and each ``reverse()`` reads these names."""

import pytest
from django.urls import resolve, reverse

PAGES = [
    ("research-home", {}, "/research/"),
    ("research-builder-new", {}, "/research/builder/"),
    ("research-builder-preview", {}, "/research/builder/preview/"),
    ("research-doc", {"name": "guide"}, "/research/docs/guide/"),
    ("research-invitations", {}, "/research/invitations/"),
    ("research-jobs", {}, "/research/jobs/"),
    ("research-job-row", {"job_id": 7}, "/research/jobs/7/"),
    ("researcher-join", {}, "/research/join/"),
    ("researcher-join-old-link", {"token": "t0k"}, "/research/join/t0k/"),
    ("research-study", {"slug": "news"}, "/research/s/news/"),
    ("research-adjudication", {"slug": "news"}, "/research/s/news/adjudication/"),
    ("research-adjudication-item", {"slug": "news", "item_id": 7}, "/research/s/news/adjudication/7/"),
    ("research-builder-edit", {"slug": "news"}, "/research/s/news/edit/"),
    ("research-exports", {"slug": "news"}, "/research/s/news/exports/"),
    ("research-export-download", {"slug": "news", "export_id": 7}, "/research/s/news/exports/7/download/"),
    ("research-exports-table", {"slug": "news"}, "/research/s/news/exports/table/"),
    ("research-participants", {"slug": "news"}, "/research/s/news/participants/"),
    ("research-participant", {"slug": "news", "public_id": "p1"}, "/research/s/news/participants/p1/"),
    (
        "research-platform-list",
        {"slug": "news", "source": "prolific"},
        "/research/s/news/participants/for-prolific.csv",
    ),
    ("research-platforms", {"slug": "news"}, "/research/s/news/platforms/"),
    (
        "research-platform-action",
        {"slug": "news", "platform": "prolific", "action": "publish"},
        "/research/s/news/platforms/prolific/publish/",
    ),
    ("research-platform-settings", {"slug": "news"}, "/research/s/news/platforms/settings/"),
    ("research-judges", {"slug": "news"}, "/research/s/news/judges/"),
    ("research-judge-key", {"slug": "news"}, "/research/s/news/judges/key/"),
    ("research-judge-start", {"slug": "news"}, "/research/s/news/judges/start/"),
    ("research-study-preview", {"slug": "news"}, "/research/s/news/preview/"),
    ("research-study-progress", {"slug": "news"}, "/research/s/news/progress/"),
    ("research-study-status", {"slug": "news"}, "/research/s/news/status/"),
    ("research-study-file", {"slug": "news"}, "/research/s/news/study-file/"),
    ("research-study-discard-tests", {"slug": "news"}, "/research/s/news/test-answers/discard/"),
    ("research-study-new", {}, "/research/studies/new/"),
    ("study-entry", {"slug": "news"}, "/s/news/"),
    ("study-submit", {"slug": "news", "assignment_id": "abc123"}, "/s/news/a/abc123/"),
    ("study-consent", {"slug": "news"}, "/s/news/consent/"),
    ("study-done", {"slug": "news"}, "/s/news/done/"),
    ("study-exam", {"slug": "news"}, "/s/news/exam/"),
    ("study-exam-submit", {"slug": "news", "assignment_id": "abc123"}, "/s/news/exam/a/abc123/"),
    ("study-exam-feedback", {"slug": "news", "assignment_id": "abc123"}, "/s/news/exam/a/abc123/feedback/"),
    ("study-exam-retry", {"slug": "news"}, "/s/news/exam/retry/"),
    ("study-instructions", {"slug": "news"}, "/s/news/instructions/"),
    ("study-leave", {"slug": "news"}, "/s/news/leave/"),
    ("study-task", {"slug": "news"}, "/s/news/task/"),
]


@pytest.mark.parametrize(("name", "kwargs", "url"), PAGES)
def test_each_page_keeps_its_name_and_address(name, kwargs, url):
    assert reverse(name, kwargs=kwargs) == url
    match = resolve(url)
    assert match.url_name == name
    assert match.kwargs == kwargs
