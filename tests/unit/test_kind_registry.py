"""The kind registry: ``KINDS`` names every task kind the code defines, each once."""

import importlib
import pkgutil

import annotation.kinds
from annotation.kinds import KINDS, TaskKind, all_kinds, get_kind


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
