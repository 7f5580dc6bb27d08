"""Which optional packages this install carries, looked up without importing them (a web-only
install, ``make run``, has no model stack)."""

from __future__ import annotations

import importlib.util

MODEL_STACK_PACKAGES = ("torch", "transformers")


def packages_installed(names: tuple[str, ...]) -> bool:
    """Whether every package is installed (looked up, not imported)."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in names)
    except ImportError:
        return False


def model_stack_installed() -> bool:
    return packages_installed(MODEL_STACK_PACKAGES)
