"""Hyperparameters per model and method, from versioned JSON files.

Files live in ``workers/editing/hparams/<method>/<model>.json`` (and, searched first, in
``EDITING_HPARAMS_DIR/<method>/<model>.json``). ``<model>`` is tried as the registry name,
then as the model directory's or hub id's last part (``gpt2-xl``), then ``default``. Each
file carries a ``version``; the loaded values, the file and its version go into every
item's provenance. In ``default.json`` a ``null`` layer means "about a third of the depth".
Plain Python (no torch).
"""

from __future__ import annotations

import json
from pathlib import Path

BUNDLED = Path(__file__).resolve().parent / "hparams"
MEMIT_DEFAULT_SPAN = 5  # layers in MEMIT's default range, ending at a third of the depth


class HparamsError(ValueError):
    """A hyperparameter file is missing, unreadable or names a layer the model lacks."""


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
    raise HparamsError(f"No hyperparameter file for method {method!r} (looked for {[*keys, 'default']}).")


def load_hparams(
    method: str,
    *,
    keys: list[str],
    num_layers: int,
    overrides: dict | None = None,
    path: str | Path | None = None,
    extra_dir: str | Path | None = None,
) -> dict:
    """The hyperparameters for ``method`` on a model with ``num_layers`` layers.

    ``path`` forces a file (``--hparams``); ``extra_dir`` is searched before the usual
    places; ``overrides`` replace single values after loading.
    """
    path = Path(path) if path else find_hparams_file(method, keys, extra_dir)
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise HparamsError(f"{path}: cannot read hyperparameters ({exc}).") from None
    if not isinstance(values, dict) or "version" not in values:
        raise HparamsError(f"{path}: a hyperparameter file is a JSON object with a 'version'.")
    values.update(overrides or {})
    values = fill_layers(values, num_layers)
    values["method"], values["file"] = method, path.name
    return values


def default_layer(num_layers: int) -> int:
    """About a third of the depth: where ROME-style edits usually work best."""
    return max(0, min(num_layers - 1, round(num_layers / 3)))


def fill_layers(values: dict, num_layers: int) -> dict:
    """Replace null layers by the defaults and check the others exist."""
    values = dict(values)
    if "layer" in values:
        if values["layer"] is None:
            values["layer"] = default_layer(num_layers)
        _check_layer(values["layer"], num_layers)
    if "layers" in values:
        if values["layers"] is None:
            last = default_layer(num_layers)
            values["layers"] = list(range(max(0, last - MEMIT_DEFAULT_SPAN + 1), last + 1))
        if not values["layers"]:
            raise HparamsError("'layers' must list at least one layer.")
        for layer in values["layers"]:
            _check_layer(layer, num_layers)
        values["layers"] = sorted(set(values["layers"]))
    return values


def _check_layer(layer, num_layers: int) -> None:
    if not isinstance(layer, int) or not 0 <= layer < num_layers:
        raise HparamsError(f"Layer {layer!r} does not exist: the model has layers 0 to {num_layers - 1}.")
