"""Participant pages are translated: no visible English left outside translation tags in a
participant template, and the German and Spanish catalogues translate every message the
code and templates mark (complete, not fuzzy, compiled)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.template.base import Lexer, TokenType

ROOT = Path(settings.BASE_DIR)
TEMPLATES = ROOT / "templates"
# The research pages (and the invitation that makes a researcher) are English only
# (SiteLanguage middleware); every other template is seen by participants, players or public
# visitors (the study pages and the kinds' templates under annotation/, the game under game/,
# base.html, home.html, the login page), so a new template is checked unless it is a research page.
RESEARCH_ONLY = ("research/", "registration/researcher_join")
TRANSLATED = [code for code, _ in settings.LANGUAGES if code != "en"]
# Attributes whose text a person reads or hears (tooltips, placeholders, screen readers).
SHOWN_ATTRIBUTES = ("title", "placeholder", "aria-label", "alt")
# What makemessages reads besides the templates and the catalogues.
PACKAGES = ("annotation", "scoring", "workers", "stats", "roft_site")
HOLE = " "  # stands for a template variable or tag in the text checked (keeps "<li{% if %}" a tag)


def participant_templates() -> list[Path]:
    every = sorted(TEMPLATES.rglob("*.html"))
    return [path for path in every if not str(path.relative_to(TEMPLATES)).startswith(RESEARCH_ONLY)]


# The participant's face, the pages both faces share (home, accounts) and the kinds (their
# pages and the game's): every module of these folders.
PARTICIPANT_VIEWS = ("annotation/participation", "annotation/views", "annotation/kinds")


def rendered_by_participant_views() -> set[str]:
    """The template names the participant views and the kinds name (a name built from the
    game's ``FRAGMENTS`` prefix included)."""
    sources = [path for folder in PARTICIPANT_VIEWS for path in sorted((ROOT / folder).rglob("*.py"))]
    names: set[str] = set()
    for source in sources:
        text = source.read_text()
        names |= set(re.findall(r"[\"']([\w/]+\.html)[\"']", text))
        fragments = re.findall(r"\{FRAGMENTS\}(\w+\.html)", text)
        names |= {f"annotation/kinds/boundary/{name}" for name in fragments}
    return names


def test_every_template_a_participant_view_renders_is_checked() -> None:
    checked = {str(path.relative_to(TEMPLATES)) for path in participant_templates()}
    rendered = rendered_by_participant_views()
    assert len(rendered) > 20 and {"annotation/consent.html", "game/landing.html", "home.html"} <= rendered
    assert rendered - checked == set()


def template_text(source: str) -> str:
    """The template's own text, with every tag and variable replaced by ``HOLE`` and the
    bodies of blocktranslate and comment blocks dropped (translated, or never shown)."""
    out, skipping = [], None
    for token in Lexer(source).tokenize():
        if token.token_type == TokenType.BLOCK:
            name = token.contents.split()[0] if token.contents else ""
            if skipping:
                if name == skipping:
                    skipping = None
                continue
            if name in ("blocktranslate", "blocktrans"):
                skipping = "end" + name
            elif name == "comment":
                skipping = "endcomment"
            out.append(HOLE)
        elif token.token_type == TokenType.TEXT and not skipping:
            out.append(token.contents)
        elif not skipping:
            out.append(HOLE)
    return "".join(out)


def has_words(text: str) -> bool:
    """Whether ``text`` holds something to translate: two letters in a row (a key cap such
    as "H", a passage letter, a number or a symbol is not a word)."""
    return bool(re.search(r"[^\W\d_]{2,}", text.replace(HOLE, " ")))


class _Visible(HTMLParser):
    """Collects the text a page shows: element text (not scripts or styles) and the
    attributes read to people."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._hidden += 1
        shown = [value for name, value in attrs if name in SHOWN_ATTRIBUTES and value]
        self.found += [value for value in shown if has_words(value)]

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._hidden -= 1

    def handle_data(self, data):
        if not self._hidden and has_words(data):
            self.found.append(data.strip())


def untranslated(source: str) -> list[str]:
    parser = _Visible()
    parser.feed(template_text(source))
    parser.close()
    return [text.replace(HOLE, " ").strip() for text in parser.found]


def test_the_checker_finds_words_outside_translation_tags() -> None:
    """The check itself: plain text, a tooltip and a text between tags are caught; words
    inside translate and blocktranslate, variables, comments and key caps are not."""
    assert untranslated("<p>Hello there</p>") == ["Hello there"]
    assert untranslated('<span title="Your points">{{ x }}</span>') == ["Your points"]
    assert untranslated("<p>{% if a %}Next{% endif %}</p>") == ["Next"]
    clean = (
        '{% load i18n %}<p title="{% translate "Hi" %}">{% translate "Hello" %} {{ name }}</p>'
        "{% blocktranslate %}Hello <b>{{ name }}</b>{% endblocktranslate %}"
        "{% comment %}Not shown{% endcomment %}<kbd>H</kbd> · 1 = {{ low }}"
        '<input type="radio"{% if on %} checked{% endif %}><script>var words = "x";</script>'
    )
    assert untranslated(clean) == []


@pytest.mark.parametrize("path", participant_templates(), ids=lambda p: str(p.relative_to(TEMPLATES)))
def test_participant_templates_have_no_untranslated_text(path: Path) -> None:
    assert untranslated(path.read_text()) == [], f"mark these for translation in {path.relative_to(ROOT)}"


def catalogue(code: str) -> polib.POFile:
    return polib.pofile(str(ROOT / "locale" / code / "LC_MESSAGES" / "django.po"))


@pytest.mark.parametrize("code", TRANSLATED)
def test_every_message_is_translated(code: str) -> None:
    """No empty, fuzzy or obsolete entry: a participant never meets English in the middle
    of a page in their language. Plural entries fill every form."""
    po = catalogue(code)
    assert po.fuzzy_entries() == [] and po.obsolete_entries() == []
    missing = [
        entry.msgid
        for entry in po
        if (entry.msgid_plural and not all(entry.msgstr_plural.values()))
        or (not entry.msgid_plural and not entry.msgstr)
    ]
    assert missing == []


@pytest.mark.parametrize("code", TRANSLATED)
def test_placeholders_survive_translation(code: str) -> None:
    """A translation keeps its message's placeholders (a lost ``%(count)d`` raises at render
    time, a lost ``{{ points }}`` drops the figure)."""
    wrong = []
    for entry in catalogue(code):
        wanted = sorted(set(re.findall(r"%\(\w+\)[sd]|%s", entry.msgid)))
        for text in [entry.msgstr] if not entry.msgid_plural else entry.msgstr_plural.values():
            if sorted(set(re.findall(r"%\(\w+\)[sd]|%s", text))) != wanted:
                wrong.append((entry.msgid, text))
    assert wrong == []


@pytest.mark.parametrize("code", TRANSLATED)
def test_compiled_catalogue_matches_its_source(code: str) -> None:
    """The committed ``.mo`` (what Django reads) holds exactly the ``.po``'s translations:
    an edit to the ``.po`` without ``compilemessages`` fails here."""
    compiled = polib.mofile(str(ROOT / "locale" / code / "LC_MESSAGES" / "django.mo"))
    assert _messages(compiled) == _messages(e for e in catalogue(code) if not e.obsolete)


def _messages(entries) -> dict:
    return {(e.msgctxt, e.msgid): e.msgstr or dict(e.msgstr_plural) for e in entries}


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="makemessages needs GNU gettext")
def test_makemessages_finds_nothing_new(tmp_path: Path) -> None:
    """Every string marked in the code and the templates is in the catalogues: running
    ``makemessages`` on a copy of the project adds no message."""
    copy = tmp_path / "project"
    for name in (*PACKAGES, "templates", "locale", "manage.py"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, copy / name)
    before = {(e.msgctxt, e.msgid) for e in catalogue("de") if not e.obsolete}
    subprocess.run(
        [sys.executable, "manage.py", "makemessages", "--locale", "de", "--no-obsolete", "--no-location"],
        cwd=copy,
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(copy)},
    )
    after = polib.pofile(str(copy / "locale" / "de" / "LC_MESSAGES" / "django.po"))
    assert {(e.msgctxt, e.msgid) for e in after if not e.obsolete} == before
