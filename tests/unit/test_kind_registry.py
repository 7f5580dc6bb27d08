"""One registry of task kinds: ``KINDS`` names every kind the code defines, each once, and
every list keyed by a kind's name is checked against it."""

import ast
import importlib
import pkgutil
from pathlib import Path

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
    builders = {  # the package's own (a test may define a builder of its own in this process)
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in KindReport.__subclasses__()
        if cls.__module__.startswith("scoring.reports.")
    }
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


def test_every_kind_declares_its_agreement_values_one_way():
    """Answer fields read as columns, or ``agreement_values`` asked answer by answer: a kind
    that computes them says so (the reports pick the route from the flag alone)."""
    for name, kind in all_kinds().items():
        computes = type(kind).agreement_values is not TaskKind.agreement_values
        assert kind.agreement_per_answer == computes, name
        assert not (kind.agreement_per_answer and kind.agreement_fields), name


def test_edited_passages_fill_exactly_the_kinds_the_site_offers_for_them():
    assert set(ITEM_BUILDERS) == set(EDIT_STUDY_KINDS) <= set(all_kinds())
    assert list(EditAndGenerateParameters.Serializer().fields["kind"].choices) == EDIT_STUDY_KINDS


def test_the_edit_command_offers_the_same_kinds():
    from workers.management.commands.edit_and_generate import Command

    parser = Command().create_parser("manage.py", "edit_and_generate")
    kind = next(action for action in parser._actions if action.dest == "kind")
    assert list(kind.choices) == EDIT_STUDY_KINDS


# Item producers name the kind of the items they build (the study they fill must be of it),
# so a kind's name may appear in them; every other module asks the kind. Keep this short.
NAMING_THE_KIND_THEY_BUILD = {
    "annotation/job_parameters.py",  # EDIT_STUDY_KINDS, tied to ITEM_BUILDERS by a test above
    "workers/editing/items.py",  # ITEM_BUILDERS: edited passages as likert/ranking/claim items
    "workers/generation/continuations.py",  # boundary items from generated continuations
    "workers/demo/game.py",  # the demo game's study file
    "annotation/services/authoring/builder.py",  # QUESTION_FORM_KIND: the kind whose questions the form edits
    "workers/simulatability/study.py",  # simulation and plausibility items
    "workers/management/commands/build_plausibility_study.py",  # the jobs that run those
    "workers/management/commands/build_simulation_study.py",
    "workers/management/commands/generate_continuations.py",
}
APP_CODE = ("annotation", "scoring", "workers", "roft_site")


def kind_name_literals(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """String constants (docstrings aside) that are exactly a kind's name or name a kind's
    module, and imports of a kind's module."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    modules = {f"annotation.kinds.{name}" for name in names}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in docstrings and isinstance(node.value, str):
            if node.value in names or node.value.startswith(tuple(modules)):
                found.append((node.lineno, node.value))
        elif isinstance(node, ast.ImportFrom | ast.Import):
            imported = (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            )
            found += [(node.lineno, m) for m in imported if m.startswith(tuple(modules))]
    return found


def test_no_module_outside_the_kinds_names_a_kind():
    """Kind knowledge lives in ``annotation/kinds/`` (and in the report builder each kind
    names, ``TaskKind.report``); shared code asks the kind through its hooks."""
    root = Path(__file__).resolve().parents[2]
    names = set(all_kinds())
    own_reports = {kind.report.rsplit(".", 1)[0].replace(".", "/") + ".py" for kind in all_kinds().values()}
    found = []
    for top in APP_CODE:
        for path in sorted((root / top).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if (
                relative.startswith("annotation/kinds/")
                or "/migrations/" in relative
                or relative in own_reports
                or relative in NAMING_THE_KIND_THEY_BUILD
            ):
                continue
            found += [f"{relative}:{line}: {value!r}" for line, value in kind_name_literals(path, names)]
    assert found == []


def test_the_kind_name_check_finds_a_kind_test_but_not_a_docstring(tmp_path):
    module = tmp_path / "shared.py"
    module.write_text(
        '"""likert"""\n\nfrom annotation.kinds.likert import settings_of\n\n\n'
        'def f(study):\n    return study.kind == "likert"\n'
    )
    assert sorted(kind_name_literals(module, {"likert"})) == [(3, "annotation.kinds.likert"), (7, "likert")]
