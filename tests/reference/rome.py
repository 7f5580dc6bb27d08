"""Convert the released ROME human evaluation into a ``ranking`` study and its answers.

The authors released, per participant, the ten pages they saw (case, taught fact,
passages a/b/c and which system wrote each) and, from their form, the letter chosen as
MOST and LEAST on each criterion. This turns the analysed batch (``ground_truth_0.json``
and its 15 rows of ``anon_responses.csv``) into a study file for ``loadstudy`` and a JSONL
file for ``importresponses`` (docs/formats.md, kind ``ranking``): an item per case with
its three passages, and per participant and page the systems in the order shown (a, b, c)
and the chosen systems per criterion.

    python -m tests.reference.rome OUTDIR   # writes rome-study.json and rome-responses.jsonl
"""

from __future__ import annotations

import csv
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = 10
LETTERS = ("a", "b", "c")
# Column order of each page in anon_responses.csv: consistency MOST, LEAST; fluency MOST, LEAST.
FORM_COLUMNS = (("consistency", "most"), ("consistency", "least"), ("fluency", "most"), ("fluency", "least"))
CRITERIA = [
    {
        "id": "consistency",
        "most": "Which passage fits best with the fact the models were taught?",
        "least": "Which passage fits worst with the fact the models were taught?",
    },
    {
        "id": "fluency",
        "most": "Which passage reads most like natural, well-written English?",
        "least": "Which passage reads least like natural, well-written English?",
    },
]


def reference_dir() -> Path:
    """``ROME_REFERENCE_DIR``, else ``shared/reference/rome-human-eval`` beside the checkout."""
    if os.environ.get("ROME_REFERENCE_DIR"):
        return Path(os.environ["ROME_REFERENCE_DIR"])
    for base in (ROOT.parent, ROOT.parent.parent):
        candidate = base / "shared" / "reference" / "rome-human-eval"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("Set ROME_REFERENCE_DIR to the folder holding ground_truth_0.json.")


def convert(directory: Path | None = None) -> tuple[dict, list[dict]]:
    """(study file, import lines) for the analysed batch."""
    directory = directory or reference_dir()
    pages = json.loads((directory / "ground_truth_0.json").read_text(encoding="utf-8"))
    forms = _forms(directory / "anon_responses.csv")
    items: dict[str, dict] = {}
    lines = []
    for record in pages:
        code = record["participant"]
        answered_at, letters = forms[code]
        for page in range(1, PAGES + 1):
            prefix = f"page_{page}_"
            case = record[prefix + "fname"].removesuffix(".json")
            shown = {letter: record[f"{prefix}passage_{letter}_label"] for letter in LETTERS}
            items.setdefault(case, _item(case, record, prefix))
            choices = {criterion: {} for criterion, _ in FORM_COLUMNS}
            for (criterion, which), letter in zip(
                FORM_COLUMNS, letters[(page - 1) * 4 : page * 4], strict=True
            ):
                choices[criterion][which] = shown[letter.strip().lower()]
            answer = {"shown": [shown[letter] for letter in LETTERS], "choices": choices}
            lines.append({"participant": code, "item": case, "answer": answer, "answered_at": answered_at})
    return _study(list(items.values())), lines


def _forms(path: Path) -> dict[str, tuple[str, list[str]]]:
    """Participant code → (submission time in ISO 8601, the 40 letters in form order)."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    forms = {}
    for row in rows[1:]:
        stamp = datetime.strptime(row[0], "%m/%d/%Y %H:%M:%S").replace(tzinfo=UTC)
        forms[row[1].strip()] = (stamp.isoformat().replace("+00:00", "Z"), row[2 : 2 + 4 * PAGES])
    return forms


def _item(case: str, record: dict, prefix: str) -> dict:
    passages = sorted(
        (
            {"system": record[f"{prefix}passage_{letter}_label"], "text": record[f"{prefix}passage_{letter}"]}
            for letter in LETTERS
        ),
        key=lambda passage: passage["system"],
    )
    return {
        "external_id": case,
        "payload": {"fact": record[prefix + "counterfactual"], "passages": passages},
        "provenance": {"source_id": case},
    }


def _study(items: list[dict]) -> dict:
    return {
        "slug": "rome-human-eval",
        "title": "Model editing: which passage learned the new fact?",
        "kind": "ranking",
        "status": "closed",
        "description": "The released human evaluation of ROME, FT+L and unedited GPT-2 XL (reference data).",
        "instructions": (
            "Each page teaches the models a made-up fact and shows three passages they wrote. "
            "Pick the passage that fits the fact best and the one that fits it worst, then the "
            "passage that reads most naturally and the one that reads least naturally."
        ),
        "annotations_per_item": 3,
        "items_per_session": PAGES,
        "config": {"criteria": CRITERIA, "show": 3},
        "items": items,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    study, lines = convert()
    (out / "rome-study.json").write_text(json.dumps(study, indent=1, ensure_ascii=False), encoding="utf-8")
    with (out / "rome-responses.jsonl").open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"{len(study['items'])} items, {len(lines)} responses → {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
