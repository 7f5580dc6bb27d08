"""/api/v1/ — the researchers' API: annotation's routes and scoring's, in one namespace ``api``.

Joined here, at the top, because ``scoring`` builds on ``annotation`` and ``annotation``
does not import ``scoring`` (``docs/architecture.md``).
"""

from annotation.api.urls import urlpatterns as annotation_routes
from scoring.api.urls import urlpatterns as scoring_routes

app_name = "api"

urlpatterns = [*annotation_routes, *scoring_routes]
