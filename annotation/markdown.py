"""Researcher-written Markdown rendered to HTML that cannot carry scripts."""

from __future__ import annotations

from functools import lru_cache

import markdown as md
import nh3
from django.utils.safestring import SafeString, mark_safe

_ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "mark", "ol", "p", "pre",
    "s", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "th", "thead",
    "tr", "u", "ul",
}  # fmt: skip


def render_markdown(text: str) -> SafeString:
    """Markdown → sanitised HTML: tags outside the allow-list, scripts and handlers removed."""
    return mark_safe(_sanitised_html(text or ""))  # noqa: S308 - nh3 cleaned it


# A study's instructions, consent and question texts are rendered on every page that shows
# them (1.7 ms each; a questionnaire page renders each question's); the same text gives the
# same HTML, so each process keeps the latest texts' HTML.
@lru_cache(maxsize=1024)
def _sanitised_html(text: str) -> str:
    html = md.markdown(text, extensions=["extra", "sane_lists"])
    return nh3.clean(html, tags=_ALLOWED_TAGS, link_rel="noopener noreferrer")
