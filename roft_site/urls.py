"""Top-level URLs: the participant pages, the admin, accounts."""

from django.contrib import admin
from django.urls import include, path

from annotation.views.health import healthz
from annotation.views.home import home

urlpatterns = [
    path("", home, name="home"),
    path("healthz", healthz, name="healthz"),
    path("", include("annotation.urls")),
    path("research/", include("scoring.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
]
