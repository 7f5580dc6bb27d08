"""python manage.py demoadmin — the demo's admin account, with a password printed once."""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the demo admin 'admin' with a generated password, printed only when created."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username: str, **options):
        users = get_user_model().objects
        if users.filter(username=username).exists():
            self.stdout.write(
                f"Demo admin '{username}' exists; its password was printed when it was created."
            )
            return
        password = secrets.token_urlsafe(12)
        users.create_superuser(username=username, email="", password=password)
        self.stdout.write(
            self.style.SUCCESS(f"Demo admin created. Username: {username}  Password: {password}")
        )
        self.stdout.write("This password is shown once; keep it.")
