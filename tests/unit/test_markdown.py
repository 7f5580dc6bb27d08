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
