"""One registry of task kinds: every list keyed by a kind's name is checked against it."""

from __future__ import annotations

from annotation.job_parameters import EDIT_STUDY_KINDS, EditAndGenerateParameters
from annotation.kinds import all_kinds
from scoring.reports import all_reports
from workers.editing.items import ITEM_BUILDERS


def test_every_report_builder_belongs_to_a_kind():
    assert set(all_reports()) <= set(all_kinds())


def test_edited_passages_fill_exactly_the_kinds_the_site_offers_for_them():
    assert set(ITEM_BUILDERS) == set(EDIT_STUDY_KINDS) <= set(all_kinds())
    assert list(EditAndGenerateParameters().fields["kind"].choices) == EDIT_STUDY_KINDS


def test_the_edit_command_offers_the_same_kinds():
    from workers.management.commands.edit_and_generate import Command

    parser = Command().create_parser("manage.py", "edit_and_generate")
    kind = next(action for action in parser._actions if action.dest == "kind")
    assert list(kind.choices) == EDIT_STUDY_KINDS
