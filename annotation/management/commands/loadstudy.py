"""python manage.py loadstudy FILE.json — create or update a study from a study file."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.models import Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.web.json_input import BadJSON, read_json


class Command(BaseCommand):
    help = "Create or update a study and its items from a study file (docs/formats.md). All or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", help="path to the study file (JSON)")
        parser.add_argument("--owner", help="username of the researcher who owns the study")
        parser.add_argument(
            "--update",
            action="store_true",
            help="change the study of that slug if there is one (without it, an existing slug is refused)",
        )
        parser.add_argument(
            "--reason",
            default="",
            help="why a study whose plan is frozen is changed (recorded as a deviation)",
        )

    def handle(self, *args, file: str, owner: str | None, update: bool = False, reason: str = "", **options):
        data = read_json_file(file)
        slug = data.get("slug") if isinstance(data, dict) else None
        if not update and isinstance(slug, str) and Study.objects.filter(slug=slug).exists():
            # A copied example file keeps the demo's slug: never change a study by surprise.
            raise CommandError(
                f"{file}: a study with slug {slug!r} already exists; nothing was written. "
                "Give your file its own slug, or pass --update to change that study."
            )
        user = None
        if owner:
            user = get_user_model().objects.filter(username=owner).first()
            if user is None:
                raise CommandError(f"--owner: no user named {owner!r}.")
        try:
            result = load_study_file(data, owner=user, source="command", reason=reason)
        except InputError as exc:
            raise CommandError(format_errors(file, exc)) from None
        verb = "created" if result.created else "updated"
        self.stdout.write(
            f"Study {result.study.slug} {verb}: {result.items_created} items added, "
            f"{result.items_updated} updated."
        )


def read_json_file(path: str):
    try:
        with open(path, "rb") as handle:
            return read_json(handle.read())
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file.") from None
    except BadJSON as exc:
        where = f"{exc.path}: " if exc.path else ""
        raise CommandError(f"{path}: {where}{exc.message}") from None


def format_errors(path: str, exc: InputError) -> str:
    lines = [f"{path}: nothing was written; fix these errors:"]
    lines += [f"  {field}: {' '.join(messages)}" for field, messages in exc.errors.items()]
    return "\n".join(lines)
