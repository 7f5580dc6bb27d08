"""python manage.py edit_model — apply one edit and save the edited model (loadable with from_pretrained)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import CommandError

from annotation.errors import InputError
from workers.management.modelcommand import ModelCommand

WEIGHT_METHODS = ["rome", "memit", "ft", "ft_m", "mend"]


class Command(ModelCommand):
    help = (
        "Edit a model with ROME, MEMIT, FT-L, FT-M or MEND (--hparams: the editor train_mend saved) "
        "from one CounterFact record and save the edited "
        "model and its tokenizer to a directory, with edit.json (request, hyperparameters, metrics)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--model", required=True, help="a MODEL_REGISTRY name, a directory or a cached hub id"
        )
        parser.add_argument("--method", required=True, choices=WEIGHT_METHODS)
        parser.add_argument("--request", required=True, help="a CounterFact record (JSON)")
        parser.add_argument("--output", required=True, help="directory for the edited model (new or empty)")
        parser.add_argument(
            "--hparams",
            help="a hyperparameter file instead of the model's usual one (mend: the trained editor's folder)",
        )

    def handle(
        self, *args, model: str, method: str, request: str, output: str, hparams: str | None, **options
    ):
        from workers.editing.base import apply_edit
        from workers.editing.hparams import HparamsError
        from workers.editing.metrics import preferences, short_form_metrics
        from workers.editing.passages import checked_hparams
        from workers.editing.requests import read_edit_request
        from workers.lm.loading import load_lm
        from workers.lm.registry import ModelNotFound

        target = Path(output)
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise CommandError(f"--output: {output} exists and is not an empty directory.")
        try:
            edit = read_edit_request(request)
        except InputError as exc:
            raise CommandError(f"--request: {exc}") from None
        try:
            lm = load_lm(model)
        except ModelNotFound as exc:
            raise CommandError(f"--model: {exc}") from None
        try:
            hp = checked_hparams(lm, method, path=hparams)
        except HparamsError as exc:
            raise CommandError(f"--hparams: {exc}") from None
        before = preferences(lm, edit)
        applied = apply_edit(lm, method, [edit], hp)
        metrics = short_form_metrics(lm, edit, before=before)
        target.mkdir(parents=True, exist_ok=True)
        lm.model.save_pretrained(target)
        lm.tokenizer.save_pretrained(target)
        about = {
            "model": lm.name,
            "method": method,
            "system": applied.system,
            "request": edit.as_record(),
            "hparams": hp.as_dict(),
            "details": applied.details,
            "metrics": metrics,
        }
        (target / "edit.json").write_text(json.dumps(about, indent=2) + "\n", encoding="utf-8")
        self.stdout.write(f"Saved the {applied.system} edit of {lm.name} to {target}: {json.dumps(metrics)}")
