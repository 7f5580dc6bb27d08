import markdown

from annotation.markdown import render_markdown


def test_markdown_renders_and_strips_scripts():
    html = render_markdown(
        "**bold** <script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror=alert(1)>"
    )
    assert "<strong>bold</strong>" in html
    assert "<script" not in html
    assert "javascript:" not in html
    assert "onerror" not in html


def test_markdown_tables_and_lists():
    html = render_markdown("1. one\n2. two\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    assert "<ol>" in html and "<table>" in html


def test_a_text_shown_on_every_page_is_rendered_once(monkeypatch):
    """The instructions and question texts come back on every page: the same text is turned
    into HTML once per process, and a changed text is rendered anew."""
    calls, real = [], markdown.markdown

    def counted(text, **options):
        calls.append(text)
        return real(text, **options)

    monkeypatch.setattr(markdown, "markdown", counted)
    text = "Rate **each** passage (rendered once)."
    first, second = render_markdown(text), render_markdown(text)
    assert first == second and "<strong>each</strong>" in first and type(second).__name__ == "SafeString"
    assert calls == [text]
    assert "<em>changed</em>" in render_markdown(text + " *changed*") and len(calls) == 2
