"""One registry of task kinds: ``KINDS`` names every kind the code defines, each once, and
every list keyed by a kind's name is checked against it."""

import importlib
import pkgutil

from django.urls import reverse
from django.utils.module_loading import import_string

import annotation.kinds
from annotation.job_parameters import EDIT_STUDY_KINDS, EditAndGenerateParameters
from annotation.kinds import KINDS, TaskKind, all_kinds, get_kind
from scoring.reports import all_reports
from workers.editing.items import ITEM_BUILDERS


def defined_kinds() -> set[type]:
    """Every named TaskKind class in ``annotation.kinds``, modules and packages alike."""
    for module in pkgutil.walk_packages(annotation.kinds.__path__, prefix="annotation.kinds."):
        importlib.import_module(module.name)
    found, todo = set(), [TaskKind]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.name and sub.__module__.startswith("annotation.kinds."):
                found.add(sub)
    return found


def test_the_registry_lists_every_kind_exactly_once():
    listed = [path.rsplit(".", 1) for path in KINDS]
    classes = [getattr(importlib.import_module(module), name) for module, name in listed]
    assert len(classes) == len(set(classes))
    assert set(classes) == defined_kinds()
    assert sorted(all_kinds()) == sorted(cls.name for cls in classes)


def test_the_boundary_game_is_a_package_kind_the_registry_finds():
    kind = get_kind("boundary")
    assert type(kind).__module__ == "annotation.kinds.boundary"
    assert "boundary" in all_kinds() and list(all_kinds()).count("boundary") == 1


def test_every_report_builder_belongs_to_a_kind():
    assert set(all_reports()) <= set(all_kinds())


def test_every_report_builder_is_named_by_exactly_one_kind():
    """A builder module no kind names would never run: the kinds' ``report`` paths are the
    only registry of builders."""
    import scoring.reports
    from scoring.reports.base import KindReport

    for module in pkgutil.iter_modules(scoring.reports.__path__):
        importlib.import_module(f"scoring.reports.{module.name}")
    builders = {f"{cls.__module__}.{cls.__qualname__}" for cls in KindReport.__subclasses__()}
    named = [kind.report for kind in all_kinds().values() if kind.report]
    assert sorted(named) == sorted(builders)
    assert {name: type(builder) for name, builder in all_reports().items()} == {
        name: import_string(kind.report) for name, kind in all_kinds().items() if kind.report
    }


def test_the_site_mounts_each_kind_s_own_pages_through_its_hooks():
    """The game's addresses come from its ``site_urls`` and ``urls`` hooks, unchanged."""
    assert reverse("game-landing") == "/play/"
    assert reverse("game-leaderboard-category", kwargs={"category": "news"}) == "/play/leaderboard/news/"
    assert reverse("game-finished", kwargs={"slug": "s1"}) == "/play/s/s1/done/"
    reveal = reverse("boundary-reveal", kwargs={"slug": "s1", "assignment_id": "a1"})
    assert reveal == "/s/s1/a/a1/boundary/reveal/"
    assert [name for name, kind in all_kinds().items() if kind.has_own_page] == ["boundary"]


def test_edited_passages_fill_exactly_the_kinds_the_site_offers_for_them():
    assert set(ITEM_BUILDERS) == set(EDIT_STUDY_KINDS) <= set(all_kinds())
    assert list(EditAndGenerateParameters().fields["kind"].choices) == EDIT_STUDY_KINDS


def test_the_edit_command_offers_the_same_kinds():
    from workers.management.commands.edit_and_generate import Command

    parser = Command().create_parser("manage.py", "edit_and_generate")
    kind = next(action for action in parser._actions if action.dest == "kind")
    assert list(kind.choices) == EDIT_STUDY_KINDS
