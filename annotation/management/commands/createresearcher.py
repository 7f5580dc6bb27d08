"""python manage.py createresearcher USERNAME — a researcher account from the shell."""

from __future__ import annotations

import os
import sys
from getpass import getpass

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.services.authoring.invitations import (
    ResearcherAccountForm,
    researcher_account_create,
    researcher_join,
)

# The form's field names as a person at the shell knows them.
FIELD_NAMES = {"password1": "password", "password2": "password (again)"}


class Command(BaseCommand):
    help = (
        "Create a researcher account (the researchers group), prompting for its password; "
        "an existing account is added to the group and keeps its password."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--email", default="", help="the new account's e-mail address (optional)")
        parser.add_argument(
            "--password-from-env",
            metavar="VAR",
            help="read the new account's password from the environment variable VAR instead of prompting",
        )

    def handle(self, *args, username: str, email: str, password_from_env: str | None, **options):
        existing = get_user_model().objects.filter(username=username).first()
        if existing is not None:
            if researcher_join(existing):
                self.stdout.write(f"{username} exists: added to the researchers group (password unchanged).")
            else:
                self.stdout.write(f"{username} is already in the researchers group; nothing changed.")
            return
        password, again = self._passwords(password_from_env)
        form = ResearcherAccountForm({"username": username, "password1": password, "password2": again})
        try:
            researcher_account_create(form=form, email=email)
        except InputError as exc:
            problems = "\n".join(
                f"  {FIELD_NAMES.get(field, field)}: {message}"
                for field, messages in exc.errors.items()
                for message in messages
            )
            raise CommandError(f"No account created:\n{problems}") from None
        self.stdout.write(self.style.SUCCESS(f"Researcher {username} created."))

    def _passwords(self, variable: str | None) -> tuple[str, str]:
        """The password twice: from the environment (once, so twice the same) or typed."""
        if variable:
            password = os.environ.get(variable, "")
            if not password:
                raise CommandError(
                    f"--password-from-env: the environment variable {variable} is not set or empty."
                )
            return password, password
        if not sys.stdin.isatty():
            raise CommandError("No terminal to type a password in: pass --password-from-env VAR.")
        return getpass("Password: "), getpass("Password (again): ")
