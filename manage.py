#!/usr/bin/env python
"""Django's command-line utility.

Run with any Python: when Django is not importable here (a new shell, no virtualenv
activated) and the project's ``.venv`` exists, the command is run again with its Python.
Whether we already run inside that venv is decided by ``sys.prefix``, not by the
interpreter's file: ``python3 -m venv`` links ``.venv/bin/python`` to the very interpreter
it was made from, so the two executables resolve to the same file either way.
"""

import os
import sys
from pathlib import Path

VENV_DIR = Path(__file__).resolve().parent / ".venv"
VENV_PYTHON = VENV_DIR / "bin" / "python"


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
    try:
        from django.core.management import execute_from_command_line
    except ModuleNotFoundError:
        if VENV_PYTHON.exists() and Path(sys.prefix).resolve() != VENV_DIR.resolve():
            os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), *sys.argv])  # noqa: S606 - our own .venv
        raise
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
