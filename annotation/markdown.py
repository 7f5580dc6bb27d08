"""Researcher-written Markdown rendered to HTML that cannot carry scripts."""

from __future__ import annotations

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
    html = md.markdown(text or "", extensions=["extra", "sane_lists"])
    return mark_safe(nh3.clean(html, tags=_ALLOWED_TAGS, link_rel="noopener noreferrer"))  # noqa: S308
