"""The commands that run models: each checks, before it creates anything, that this install
carries the model stack (a web-only install, ``make run``, has no torch)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from workers.installed import model_stack_installed

MODEL_STACK_MISSING = (
    "{name} needs the model stack (torch, transformers), which this web-only install lacks: "
    "run `make install-all` (or pip install -r requirements.txt) and try again. Nothing was created."
)


class ModelCommand(BaseCommand):
    """A command that runs a model: refused with one clear message, before its arguments touch
    the database, where the model stack is not installed."""

    def execute(self, *args, **options):
        if not model_stack_installed():
            raise CommandError(MODEL_STACK_MISSING.format(name=self._command_name()))
        return super().execute(*args, **options)

    def _command_name(self) -> str:
        return self.__class__.__module__.rpartition(".")[2]
