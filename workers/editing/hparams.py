"""Hyperparameters per model and method: versioned JSON files read into typed, frozen dataclasses.

Files live in ``workers/editing/hparams/<method>/<model>.json`` (and, searched first, in
``EDITING_HPARAMS_DIR/<method>/<model>.json``). ``<model>`` is tried as the registry name,
then as the model directory's or hub id's last part (``gpt2-xl``), then ``default``. Each
file carries a ``version``; the file name and version go into every item's provenance. In
``default.json`` a ``null`` layer means "about a third of the depth".

Each method has one dataclass (``NoneHparams`` … ``MemitHparams``, in ``HPARAMS``) whose
fields are exactly the keys its file may hold: a misspelled or missing key, or a value of
the wrong type, is an ``HparamsError`` naming the key and the method when the file is
loaded, never a value silently ignored (or a ``KeyError`` halfway through an edit).
Plain Python (no torch).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, Self, TypeVar

BUNDLED = Path(__file__).resolve().parent / "hparams"
MEMIT_DEFAULT_SPAN = 5  # layers in MEMIT's default range, ending at a third of the depth
SUBJECT_LAST, PROMPT_LAST = "subject_last", "last"
FACT_TOKENS = (SUBJECT_LAST, PROMPT_LAST)
STATISTICS = ("corpus", "identity")


class HparamsError(ValueError):
    """A hyperparameter file is missing, unreadable, malformed or names a layer the model lacks."""


@dataclass(frozen=True, kw_only=True)
class Hparams:
    """What every method's file holds; ``file`` is set by the loader (provenance), not read."""

    method: ClassVar[str]
    version: int
    file: str = ""

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], *, file: str = "") -> Self:
        """The dataclass for a file's JSON object: unknown or missing keys and wrong types are errors."""
        known = {f.name: f for f in fields(cls) if f.name != "file"}
        unknown = sorted(set(values) - set(known))
        if unknown:
            close = difflib.get_close_matches(unknown[0], known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise HparamsError(
                f"Unknown {cls.method} hyperparameter {unknown[0]!r}{hint}; "
                f"the {cls.method} keys are: {', '.join(sorted(known))}."
            )
        required = [name for name, f in known.items() if _required(f)]
        missing = [name for name in required if name not in values]
        if missing:
            raise HparamsError(f"Missing {cls.method} hyperparameter {missing[0]!r}.")
        hints = typing.get_type_hints(cls)
        checked = {
            name: _checked(value, hints[name], f"{cls.method} hyperparameter {name!r}")
            for name, value in values.items()
        }
        return cls(**checked, file=file)

    def as_dict(self) -> dict[str, Any]:
        """The values with the method's name (as ``edit.json`` records them); lists, not tuples."""
        return {"method": self.method, **json.loads(json.dumps(dataclasses.asdict(self)))}

    def for_model(self, num_layers: int) -> Self:
        """Null layers replaced by the defaults for a model this deep; other layers checked."""
        return self

    def located(self, path: Path) -> Self:
        """The values with paths read relative to the file at ``path`` (MEND's editor)."""
        return self


@dataclass(frozen=True, kw_only=True)
class NoneHparams(Hparams):
    method: ClassVar[str] = "none"


@dataclass(frozen=True, kw_only=True)
class IkeHparams(Hparams):
    method: ClassVar[str] = "ike"
    demonstrations: int = 8  # how many demonstrations lead the prompt


@dataclass(frozen=True, kw_only=True)
class FtHparams(Hparams):
    method: ClassVar[str] = "ft"
    layer: int | None
    modules: tuple[str, ...]  # mlp_out and/or mlp_in
    steps: int
    lr: float
    norm_constraint: float  # L∞ bound around the original weights
    stop_loss: float

    def for_model(self, num_layers: int) -> Self:
        return dataclasses.replace(self, layer=_one_layer(self.layer, num_layers))

    @property
    def edited_layer(self) -> int:
        """The layer the edit acts on, once ``for_model`` has chosen it."""
        return _chosen(self.layer)


@dataclass(frozen=True, kw_only=True)
class FtMHparams(FtHparams):
    """FT-M takes FT-L's keys; only the objective differs (``workers/editing/ft.py``)."""

    method: ClassVar[str] = "ft_m"


@dataclass(frozen=True, kw_only=True)
class LocatedHparams(Hparams):
    """ROME's and MEMIT's shared keys: where the edit acts, how δ is optimised, key statistics."""

    fact_token: str  # subject_last or last
    context_templates: tuple[tuple[int, int], ...]  # (length, count) of self-written prefixes
    essence_prompts: tuple[str, ...]
    v_steps: int
    v_lr: float
    v_weight_decay: float
    v_stop_loss: float
    clamp_norm_factor: float
    kl_factor: float
    stats: str  # corpus or identity
    stats_tokens: int
    stats_max_length: int
    stats_batch_size: int
    stats_ridge: float = 0.0
    stats_corpus: str | None = None  # else EDITING_STATS_CORPUS

    def __post_init__(self) -> None:
        for key, allowed in (("fact_token", FACT_TOKENS), ("stats", STATISTICS)):
            if getattr(self, key) not in allowed:
                raise HparamsError(
                    f"The {self.method} hyperparameter {key!r} must be one of {allowed}, "
                    f"not {getattr(self, key)!r}."
                )


@dataclass(frozen=True, kw_only=True)
class RomeHparams(LocatedHparams):
    method: ClassVar[str] = "rome"
    layer: int | None

    def for_model(self, num_layers: int) -> Self:
        return dataclasses.replace(self, layer=_one_layer(self.layer, num_layers))

    @property
    def edited_layer(self) -> int:
        """The layer the edit acts on, once ``for_model`` has chosen it."""
        return _chosen(self.layer)


@dataclass(frozen=True, kw_only=True)
class MemitHparams(LocatedHparams):
    method: ClassVar[str] = "memit"
    layers: tuple[int, ...] | None
    mom2_update_weight: float  # λ

    def for_model(self, num_layers: int) -> Self:
        layers = self.layers
        if layers is None:
            last = default_layer(num_layers)
            layers = tuple(range(max(0, last - MEMIT_DEFAULT_SPAN + 1), last + 1))
        if not layers:
            raise HparamsError("'layers' must list at least one layer.")
        for layer in layers:
            _check_layer(layer, num_layers)
        return dataclasses.replace(self, layers=tuple(sorted(set(layers))))

    @property
    def edited_layers(self) -> tuple[int, ...]:
        """The layers the edit acts on, once ``for_model`` has chosen them."""
        return _chosen(self.layers)


@dataclass(frozen=True, kw_only=True)
class MendHparams(Hparams):
    """MEND's one key: the editor ``train_mend`` trained for this model (its directory).

    In a file, ``editor`` is a folder beside the file (a relative path that stays inside the
    file's own folder: a researcher's hyperparameter folder cannot send a job elsewhere);
    ``--hparams`` may name the editor's directory itself (``read_hparams_file``). The layers
    and settings live in the editor's ``definition.json``, not here.
    """

    method: ClassVar[str] = "mend"
    editor: str

    def located(self, path: Path) -> Self:
        editor = Path(self.editor)
        if editor.is_absolute() or ".." in editor.parts or not editor.parts:
            raise HparamsError(
                f"The mend hyperparameter 'editor' must be a folder beside the file, not {self.editor!r}."
            )
        return dataclasses.replace(self, editor=str(path.parent / editor))


HPARAMS: dict[str, type[Hparams]] = {
    cls.method: cls
    for cls in (NoneHparams, IkeHparams, FtHparams, FtMHparams, RomeHparams, MemitHparams, MendHparams)
}
MISSING_HINTS = {"mend": " MEND needs an editor trained for the model: run train_mend and name its folder."}


def search_dirs(extra: str | Path | None = None) -> list[Path]:
    """``extra`` (a job's own directory), then ``EDITING_HPARAMS_DIR``, then the bundled files."""
    from django.conf import settings

    configured = getattr(settings, "EDITING_HPARAMS_DIR", None) if settings.configured else None
    return [Path(d) for d in (extra, configured) if d] + [BUNDLED]


def model_keys(name: str, source: str) -> list[str]:
    """File names to try for a model, most specific first."""
    keys = [name, Path(source.rstrip("/")).name, Path(name.rstrip("/")).name]
    return [k for i, k in enumerate(keys) if k and "/" not in k and k not in keys[:i]]


def find_hparams_file(method: str, keys: list[str], extra_dir: str | Path | None = None) -> Path:
    for key in [*keys, "default"]:
        for directory in search_dirs(extra_dir):
            path = directory / method / f"{key}.json"
            if path.is_file():
                return path
    raise HparamsError(
        f"No hyperparameter file for method {method!r} (looked for {[*keys, 'default']})."
        + MISSING_HINTS.get(method, "")
    )


def read_hparams_file(method: str, path: str | Path) -> Hparams:
    """One file as the method's dataclass (layers as written: ``null`` stays ``None``).

    For ``mend`` the path may be a trained editor's directory: the hyperparameters are then
    that editor (its definition's version), with nothing else to read.
    """
    path = Path(path)
    if method not in HPARAMS:
        raise HparamsError(f"Unknown editing method {method!r}; known: {', '.join(HPARAMS)}.")
    if method == MendHparams.method and path.is_dir():
        return MendHparams(version=_editor_version(path), editor=str(path), file=path.name)
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise HparamsError(f"{path}: cannot read hyperparameters ({exc}).") from None
    if not isinstance(values, dict) or "version" not in values:
        raise HparamsError(f"{path}: a hyperparameter file is a JSON object with a 'version'.")
    try:
        return HPARAMS[method].from_dict(values, file=path.name).located(path)
    except HparamsError as exc:
        raise HparamsError(f"{path}: {exc}") from None


def check_hparams_dir(directory: str | Path, methods: list[str]) -> None:
    """Every file the methods could take from ``directory`` loads (a job's ``hparams_dir``,
    checked where the files are, before the job is created)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise HparamsError(f"{directory} is not a directory.")
    for method in methods:
        for path in sorted((directory / method).glob("*.json")):
            read_hparams_file(method, path)


def load_hparams(
    method: str,
    *,
    keys: list[str],
    num_layers: int,
    path: str | Path | None = None,
    extra_dir: str | Path | None = None,
) -> Hparams:
    """The hyperparameters for ``method`` on a model with ``num_layers`` layers.

    ``path`` forces a file (``--hparams``); ``extra_dir`` is searched before the usual places.
    """
    path = Path(path) if path else find_hparams_file(method, keys, extra_dir)
    try:
        return read_hparams_file(method, path).for_model(num_layers)
    except HparamsError as exc:
        message = str(exc)
        raise HparamsError(message if message.startswith(str(path)) else f"{path}: {message}") from None


EDITOR_DEFINITION = "definition.json"  # what train_mend writes beside the editor's networks


def _editor_version(directory: Path) -> int:
    """The version in a trained editor's definition; ``HparamsError`` when it is not an editor."""
    try:
        definition = json.loads((directory / EDITOR_DEFINITION).read_text(encoding="utf-8"))
        return int(definition["version"])
    except (OSError, ValueError, KeyError, TypeError):
        raise HparamsError(
            f"{directory}: not a trained MEND editor "
            f"(no readable {EDITOR_DEFINITION}; train_mend writes one)."
        ) from None


def default_layer(num_layers: int) -> int:
    """About a third of the depth: where ROME-style edits usually work best."""
    return max(0, min(num_layers - 1, round(num_layers / 3)))


def _one_layer(layer: int | None, num_layers: int) -> int:
    layer = default_layer(num_layers) if layer is None else layer
    _check_layer(layer, num_layers)
    return layer


_T = TypeVar("_T")


def _chosen(value: _T | None) -> _T:
    """A layer setting after ``for_model``, where a file's ``null`` becomes the default."""
    if value is None:
        raise HparamsError("The layers are chosen for a model (load_hparams) before an edit.")
    return value


def _check_layer(layer: int, num_layers: int) -> None:
    if not 0 <= layer < num_layers:
        raise HparamsError(f"Layer {layer!r} does not exist: the model has layers 0 to {num_layers - 1}.")


def _required(field: dataclasses.Field) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


def _checked(value: Any, hint: Any, label: str) -> Any:
    """``value`` as the field's type (JSON lists become tuples), or an error naming the key."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        return _checked(value, next(a for a in args if a is not type(None)), label)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise HparamsError(f"The {label} must be a list, not {value!r}.")
        items = args if args[-1] is not Ellipsis else (args[0],) * len(value)
        if len(items) != len(value):
            raise HparamsError(f"The {label} must have {len(items)} values, not {value!r}.")
        return tuple(_checked(item, kind, label) for item, kind in zip(value, items, strict=True))
    if hint is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, hint) or isinstance(value, bool) is not (hint is bool):
        article = "an" if hint is int else "a"
        raise HparamsError(f"The {label} must be {article} {hint.__name__}, not {value!r}.")
    return value
