"""The tests' tiny models: one recipe each, built once per recipe into a shared cache.

Each model is trained in a fresh interpreter on pinned kernels and kept under
``<cache>/<name>-<key>``, where the key hashes the modules that build it, the library
versions and the kernels: a changed recipe gets a new folder, an unchanged one is reused by
every later run. A lock per model lets several processes ask for the same one at once
(pytest-xdist's workers, the background prebuild that ``make test`` starts): the first
builds, the others wait for it and read the result.

``python -m tests.tiny_models`` builds every missing model, one after another (``make
test`` runs it in the background while lint and the first tests run), all in one interpreter
started with the pinned kernels: each build in an interpreter of its own spent 5 CPU seconds
importing torch and transformers again, a fifth of a cold build of all five.

The current build of every recipe is also committed under ``tests/data/tiny-models/`` (6 MB of
safetensors and JSON, written by ``python -m tests.tiny_models --ship``) and read from there
first: a fresh clone's ``make test`` spent 150 of its 370 CPU seconds training them again. A
recipe whose source changed has a new key, finds no shipped build and is trained into the cache
as before; ``tests/unit/test_tiny_models_shipped.py`` fails until its build is shipped again.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType

from tests import tiny_encoder, tiny_mend, tiny_model, tiny_simulatability_model, tiny_subject_model

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "tests" / "data" / "tiny-models"  # the committed builds of the current recipes
SIM_PROMPTS = ROOT / "workers" / "simulatability" / "prompts"

# The CPU kernels a model is trained with, whatever the machine. torch picks AVX-512 code
# where the CPU has it and AVX2 elsewhere, MKL likewise, and they round differently: trained
# for a few hundred steps, the same seed then gives a different model on each (the subject
# model knew its facts on one and missed by nats on the other). Every x86-64 machine of ours
# has AVX2, so torch's own kernels are pinned to it. MKL is pinned to its COMPATIBLE branch:
# it honours MKL_CBWR=AVX2 only on Intel processors and falls back to its automatic choice
# on AMD ones (MKL_VERBOSE says "CNR:AUTO"), so an AMD machine trained other models.
PINNED_KERNELS = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "COMPATIBLE",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
# Set (with ``PINNED_KERNELS``) in the interpreter ``main`` starts: it builds in-process.
BUILDS_IN_PROCESS = "ROFT_TINY_MODELS_BUILD_HERE"


@dataclass(frozen=True)
class Recipe:
    """How one tiny model is made: the function that trains it into a folder, and every
    source whose change must retrain it (its modules, and data files it reads)."""

    name: str
    build: Callable[[Path], Path]
    modules: tuple[ModuleType, ...]
    data: Callable[[], bytes] = lambda: b""
    marker: str = "config.json"  # the file a finished build has (a model's config, an editor's definition)

    def key(self) -> str:
        source = b"".join(Path(module.__file__ or "").read_bytes() for module in self.modules)
        versions = "|".join(metadata.version(name) for name in ("torch", "transformers", "tokenizers"))
        kernels = repr(sorted(PINNED_KERNELS.items()))  # other kernels train another model
        return hashlib.sha256(source + self.data() + versions.encode() + kernels.encode()).hexdigest()[:16]


def _simulatability_prompts() -> bytes:
    """The prompt files the simulatability model trains on: a changed prompt retrains it."""
    return b"".join(path.read_bytes() for path in sorted(SIM_PROMPTS.glob("*.json")))


def _mend_sources() -> bytes:
    """The editor's code (read, not imported: this module loads without torch or Django)."""
    return b"".join((ROOT / "workers" / "editing" / name).read_bytes() for name in MEND_SOURCES)


MEND_SOURCES = ("mend.py", "mend_training.py", "encoding.py", "metrics.py")
TINY = "tiny-gpt2"
SUBJECT = "tiny-subject-gpt2"  # two-word subjects, filler text
SIM = "tiny-sim-gpt2"  # answers in the simulatability prompts' layout
ENCODER = "tiny-bert"  # the trained raters' encoder
MEND_EDITOR = "tiny-gpt2-mend"  # MEND's editor networks trained for TINY

# In the order the prebuild makes them: the model most tests load first.
RECIPES = {
    recipe.name: recipe
    for recipe in (
        Recipe(TINY, tiny_model.build_tiny_lm, (tiny_model,)),
        Recipe(SUBJECT, tiny_subject_model.build_subject_lm, (tiny_model, tiny_subject_model)),
        Recipe(ENCODER, tiny_encoder.build_tiny_encoder, (tiny_encoder,)),
        Recipe(
            SIM,
            tiny_simulatability_model.build_tiny_simulatability_lm,
            (tiny_model, tiny_simulatability_model),
            _simulatability_prompts,
        ),
        Recipe(
            MEND_EDITOR,
            tiny_mend.build_tiny_mend,
            (tiny_model, tiny_mend),
            _mend_sources,
            marker="definition.json",
        ),
    )
}


def model_cache_root() -> Path:
    """``ROFT_TEST_MODEL_DIR`` if set (a private cache, say to retrain from scratch), else the temp dir's."""
    configured = os.environ.get("ROFT_TEST_MODEL_DIR")
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "roft-test-models"


def shipped_model(name: str) -> Path:
    """Where the committed build of model ``name``'s current recipe lies (it may not exist)."""
    return SHIPPED / f"{name}-{RECIPES[name].key()}"


def shipped_builds(name: str) -> list[Path]:
    """Every committed build of model ``name``, whatever its recipe's key."""
    return [
        folder
        for folder in SHIPPED.glob(f"{name}-*")
        if re.fullmatch(f"{re.escape(name)}-[0-9a-f]{{16}}", folder.name)
    ]


def built_model(name: str) -> Path:
    """The folder of model ``name``: the committed build of its recipe, else the cache's,
    built first if no run has built this recipe yet."""
    recipe = RECIPES[name]
    shipped = shipped_model(name)
    if (shipped / recipe.marker).is_file():
        return shipped
    root = model_cache_root()
    target = root / f"{name}-{recipe.key()}"
    if (target / recipe.marker).is_file():
        return target
    with _locked(root / f".{target.name}.lock"):
        if not (target / recipe.marker).is_file():  # nobody built it while we waited
            _build_into(recipe, target)
    return target


def is_built(name: str) -> bool:
    """Whether the repository or the cache holds model ``name`` already (nothing locked, nothing built)."""
    recipe = RECIPES[name]
    folders = (shipped_model(name), model_cache_root() / f"{name}-{recipe.key()}")
    return any((folder / recipe.marker).is_file() for folder in folders)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` across processes; the OS drops it if the holder dies."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build_into(recipe: Recipe, target: Path) -> None:
    """Train ``recipe`` into a scratch folder beside ``target``, then move it into place."""
    building = Path(tempfile.mkdtemp(dir=target.parent, prefix="building-"))
    try:
        if _kernels_pinned_here():
            recipe.build(building)
        else:
            _build_with_pinned_kernels(recipe.build, building)
        os.replace(building, target)
    finally:
        shutil.rmtree(building, ignore_errors=True)


def _build_with_pinned_kernels(build: Callable[[Path], Path], directory: Path) -> None:
    """Run ``build(directory)`` in a fresh interpreter with ``PINNED_KERNELS`` (they are read
    when torch starts, so they cannot be set in this process); its error, if any, is ours."""
    code = (
        "import sys; from pathlib import Path; "
        f"from {build.__module__} import {build.__name__} as build; build(Path(sys.argv[1]))"
    )
    finished = subprocess.run(
        [sys.executable, "-c", code, str(directory)],
        cwd=ROOT,
        env={**os.environ, **PINNED_KERNELS},
        capture_output=True,
        text=True,
        check=False,
    )
    if finished.returncode:
        raise RuntimeError(f"Building {build.__name__} failed:\n{finished.stderr[-3000:]}")


def _kernels_pinned_here() -> bool:
    """Whether this interpreter was started by ``main`` with ``PINNED_KERNELS`` (read when
    torch starts: setting them later would not pin anything)."""
    wanted = {**PINNED_KERNELS, BUILDS_IN_PROCESS: "1"}
    return all(os.environ.get(name) == value for name, value in wanted.items())


def ship(name: str) -> Path:
    """Copy the build of model ``name``'s current recipe into ``SHIPPED`` (to be committed),
    removing that model's builds of older recipes there."""
    source = built_model(name)
    target = shipped_model(name)
    if source != target:
        shutil.copytree(source, target, dirs_exist_ok=True)
    for stale in shipped_builds(name):
        if stale != target:
            shutil.rmtree(stale)
    return target


def main(argv: list[str]) -> int:
    """Build every missing model, the most used first, in one interpreter with the pinned
    kernels (this one re-run); print where each one is (``--ship``: and copy each into
    ``SHIPPED``). Every build seeds what it draws, so a model built here is the one a test's
    own build (``built_model``) makes."""
    if not _kernels_pinned_here():
        env = {**os.environ, **PINNED_KERNELS, BUILDS_IN_PROCESS: "1"}
        rerun = [sys.executable, "-m", "tests.tiny_models", *argv]
        return subprocess.run(rerun, cwd=ROOT, env=env, check=False).returncode
    for name in RECIPES:
        folder = ship(name) if "--ship" in argv else built_model(name)
        print(f"{name}: {folder}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
