"""Top-level URLs: the participant pages, the admin, accounts."""

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import JsonResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import include, path
from django.views.defaults import bad_request, page_not_found
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from annotation.views.accounts import LandingLoginView, PasswordReset
from annotation.views.home import home
from roft_site.health import healthz


class FaviconView(RedirectView):
    """``/favicon.ico`` for pages without our ``<link rel="icon">`` (the admin, the API docs):
    the static icon, resolved per request so the hashed name of a collected build is used."""

    permanent = False

    def get_redirect_url(self, *args, **kwargs) -> str:
        return static("img/favicon.svg")


urlpatterns = [
    path("", home, name="home"),
    path("healthz", healthz, name="healthz"),
    path("favicon.ico", FaviconView.as_view(), name="favicon"),
    path("", include("annotation.participation.urls")),
    path("research/", include("scoring.urls")),
    # before django.contrib.auth's own: the reset that says when no mail could be sent
    path("accounts/password_reset/", PasswordReset.as_view(), name="password_reset"),
    # before Django's own accounts URLs: a researcher lands on /research/ after logging in
    path("accounts/login/", LandingLoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include("roft_site.api_urls")),
    path("hooks/", include("annotation.hooks")),  # the platforms' events (webhooks)
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # the split view serves its script from a URL: no inline script (Content-Security-Policy)
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("research/", include("annotation.research.urls")),
]

if settings.BENCH_ANCHORS:  # bench/load.py's anchors; never on in a deployment
    from roft_site import bench_views

    urlpatterns += [
        path("bench/hello", bench_views.hello),
        path("bench/locked-write/<int:row>", bench_views.locked_write),
    ]


def not_found(request, exception):
    """404: JSON under /api/ (every API answer is JSON, also for a path no route matches or
    whose value a URL converter refuses, such as ``/api/v1/jobs/-1/``); the usual page elsewhere."""
    if request.path_info.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)


handler404 = not_found


TOO_BIG = (RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent)


def request_refused(request, exception):
    """400, and 413 with what to do for a form past Django's bounds on form text
    (``DATA_UPLOAD_MAX_MEMORY_SIZE``) or fields: the form cannot be read, so nothing was
    saved and nothing of it can be shown again; files go in file fields, which take
    ``API_MAX_UPLOAD_BYTES``. JSON under /api/, as every API answer."""
    if not isinstance(exception, TOO_BIG):
        return bad_request(request, exception)
    context = {
        "text_limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
        "field_limit": settings.DATA_UPLOAD_MAX_NUMBER_FIELDS,
        "file_limit": settings.API_MAX_UPLOAD_BYTES,
    }
    if request.path_info.startswith("/api/"):
        return JsonResponse({"detail": "The request is larger than this API accepts."}, status=413)
    return render(request, "request_too_big.html", context, status=413)


handler400 = request_refused
