#!/usr/bin/env python
"""Django's command-line utility.

Run with any Python: when Django is not importable here (a new shell, no virtualenv
activated) and the project's ``.venv`` exists, the command is run again with its Python.
"""

import os
import sys
from pathlib import Path

VENV_PYTHON = Path(__file__).resolve().parent / ".venv" / "bin" / "python"


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
    try:
        from django.core.management import execute_from_command_line
    except ModuleNotFoundError:
        if VENV_PYTHON.exists() and Path(sys.executable).resolve() != VENV_PYTHON.resolve():
            os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), *sys.argv])  # noqa: S606 - our own .venv
        raise
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
