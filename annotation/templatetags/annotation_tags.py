"""Template helpers for the participant pages."""

from django import template

from annotation.markdown import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str):
    return render_markdown(text)


@register.filter
def field_errors(errors: dict | None, name: str) -> list[str]:
    """The messages for one field from a service's ``InputError.errors``."""
    if not errors:
        return []
    return [m for path, msgs in errors.items() if path == name or path.startswith(f"{name}.") for m in msgs]


@register.filter
def letter(index: int) -> str:
    """0 → A, 1 → B … (labels for passages shown side by side)."""
    return chr(ord("A") + int(index))
