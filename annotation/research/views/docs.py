"""The documentation a researcher needs, rendered in the app (a web user has no repository)."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.markdown import render_markdown

from .decorators import researcher_required

# The pages researchers are pointed to from the research pages, by name → file under docs/.
RESEARCHER_DOCS = {
    "statistics": "Statistics",
    "builder": "The study builder",
    "formats": "Study and answer formats",
    "crowd": "Crowd platforms",
    "exports": "Exports",
    "privacy": "Erasure and retention",
    "authenticity": "Authenticity signals",
    "reproducibility": "Versions, frozen plans and datasheets",
}


@researcher_required
def research_doc(request: HttpRequest, name: str) -> HttpResponse:
    if name not in RESEARCHER_DOCS:
        raise Http404("No such page.")
    text = (settings.BASE_DIR / "docs" / f"{name}.md").read_text(encoding="utf-8")
    context = {
        "name": name,
        "title": RESEARCHER_DOCS[name],
        "html": render_markdown(text),
        "docs": RESEARCHER_DOCS,
    }
    return render(request, "research/doc.html", context)
