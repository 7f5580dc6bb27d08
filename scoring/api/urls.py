"""``scoring``'s routes of /api/v1/ (joined with annotation's in ``roft_site/api_urls.py``)."""

from django.urls import path

from .views import ReportListView

urlpatterns = [
    path("studies/<slug:slug>/reports/", ReportListView.as_view(), name="report-list"),
]
