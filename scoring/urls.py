"""The statistics dashboard, under /research/."""

from django.urls import path

from . import views

urlpatterns = [
    path("s/<slug:slug>/dashboard/", views.study_dashboard, name="study-dashboard"),
    path("s/<slug:slug>/dashboard/recompute/", views.recompute_reports, name="study-dashboard-recompute"),
    path("s/<slug:slug>/dashboard/job/", views.reports_job, name="study-dashboard-job"),
    path("s/<slug:slug>/plan/", views.study_plan, name="study-plan"),
    path("s/<slug:slug>/datasheet/", views.datasheet_page, name="study-datasheet-page"),
    path(
        "s/<slug:slug>/datasheet.<str:fmt>",
        views.study_datasheet,
        name="study-datasheet",
    ),
    path("s/<slug:slug>/dashboard/plots/<slug:name>.svg", views.dashboard_plot, name="study-dashboard-plot"),
]
