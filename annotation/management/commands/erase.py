"""python manage.py erase SLUG --participant ID | --platform-id ID | --pseudonym P [--all-studies]

An operator's erasure (shell access counts as an admin's): the same rule as the
participants page (``services.authoring.erasure``), with ``--all-studies`` reaching every
study the participant took part in. ``--by USERNAME`` names who asked, for the tombstone.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.models import Erasure, Study
from annotation.services.authoring.erasure import erase, find_enrollment, participant_studies


class Command(BaseCommand):
    help = (
        "Erase a participant's data from a study (or, with --all-studies, from every study): answers, "
        "pages, enrollment, exam attempts, platform id; their places go back; a tombstone keeps the counts."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study the participant took part in")
        named = parser.add_mutually_exclusive_group(required=True)
        named.add_argument("--participant", default="", help="their public id")
        named.add_argument("--platform-id", default="", help="their Prolific or MTurk id")
        named.add_argument("--pseudonym", default="", help="their pseudonym in this study's exports")
        parser.add_argument("--all-studies", action="store_true", help="erase them from every study")
        parser.add_argument("--by", default="", help="the username of the admin who asked (the tombstone)")

    def handle(self, *args, slug: str, participant: str, platform_id: str, pseudonym: str, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        by = None
        if options["by"]:
            by = get_user_model().objects.filter(username=options["by"]).first()
            if by is None:
                raise CommandError(f"--by: no user {options['by']!r}.")
        try:
            enrollment = find_enrollment(
                study, participant=participant, platform_id=platform_id, pseudonym=pseudonym
            )
            person = enrollment.participant
            studies = participant_studies(person) if options["all_studies"] else [study]
            result = erase(person, studies=studies, by=by, how=Erasure.How.COMMAND)
        except InputError as exc:
            raise CommandError(exc.summary()) from None
        self.stdout.write(
            f"Erased {result.answers} answer(s), {result.pages} page(s) and {result.exam_attempts} exam "
            f"attempt(s) from {', '.join(result.studies) or 'no study'}"
            + ("; the participant is gone." if result.participant_removed else ".")
        )
