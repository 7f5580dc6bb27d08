"""Turn the released ROME human evaluation into a `ranking` study file and an
`importresponses` JSONL file (docs/formats.md, "Kind ranking").

The release (kmeng01/rome, folder human/) holds, per batch, `ground_truth_<batch>.json`:
one record per participant with, for each of their 10 pages, the CounterFact case file,
the taught counterfactual, passages a/b/c and the system that wrote each; and
`anon_responses.csv`: per participant code, the letters chosen as MOST/LEAST consistent and
MOST/LEAST fluent on each page. Here a case becomes an item (external_id: the case file
without `.json`; fact: the counterfactual; passages: one per system), and each page of a
participant becomes a response whose `shown` is the page's a/b/c order and whose choices are
the letters turned into systems.

    python docs/tools/rome_to_ranking.py REFERENCE_DIR OUT_DIR [--batch 0]
    python manage.py loadstudy OUT_DIR/rome-study.json
    python manage.py importresponses rome-human-eval OUT_DIR/rome-responses.jsonl --source lab

Standard library only; prints what it wrote and any page it had to leave out.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

LETTERS = "abc"
PAGES = 10
QUESTIONS = {  # (criterion, end) → the form's column for a page
    ("consistency", "most"): "PAGE {page}, CONSISTENCY [MOST CONSISTENT?]",
    ("consistency", "least"): "PAGE {page}, CONSISTENCY [LEAST CONSISTENT?]",
    ("fluency", "most"): "PAGE {page}, FLUENCY [MOST FLUENT?]",
    ("fluency", "least"): "PAGE {page}, FLUENCY [LEAST FLUENT?]",
}


def read_pages(record: dict) -> list[dict]:
    """One participant's pages: case id, fact, and the passages in a/b/c order."""
    pages = []
    for page in range(1, PAGES + 1):
        prefix = f"page_{page}_"
        if prefix + "fname" not in record:
            continue
        passages = [
            {"system": record[f"{prefix}passage_{x}_label"], "text": record[f"{prefix}passage_{x}"]}
            for x in LETTERS
        ]
        case = record[prefix + "fname"].removesuffix(".json")
        pages.append(
            {"page": page, "case": case, "fact": record[prefix + "counterfactual"], "passages": passages}
        )
    return pages


def study_file(records: list[dict], *, slug: str, batch: str) -> dict:
    """The items: one per case, passages sorted by system (the pages' orders are in the responses)."""
    cases: dict[str, dict] = {}
    for record in records:
        for page in read_pages(record):
            passages = sorted(page["passages"], key=lambda p: p["system"])
            cases.setdefault(page["case"], {"fact": page["fact"], "passages": passages})
    items = [
        {
            "external_id": case,
            "payload": payload,
            "provenance": {"source_id": case, "model": "gpt2-xl"},
        }
        for case, payload in sorted(cases.items())
    ]
    return {
        "slug": slug,
        "title": f"ROME human evaluation (released responses, batch {batch})",
        "kind": "ranking",
        "status": "closed",
        "description": "Responses of the ROME paper's human evaluation, imported from the authors' release.",
        "annotations_per_item": 3,
        "items_per_session": PAGES,
        "config": {"show": 3},
        "items": items,
    }


def response_lines(records: list[dict], answers: dict[str, dict]) -> tuple[list[dict], list[str]]:
    """One line per answered page; pages with a missing or impossible choice are reported."""
    lines, skipped = [], []
    for record in records:
        code = record["participant"]
        row = answers.get(code)
        if row is None:
            skipped.append(f"participant {code}: no row in the responses file")
            continue
        for page in read_pages(record):
            by_letter = {x.upper(): p["system"] for x, p in zip(LETTERS, page["passages"], strict=True)}
            choices: dict[str, dict] = {}
            for (criterion, end), column in QUESTIONS.items():
                letter = row.get(column.format(page=page["page"]), "").strip().upper()
                choices.setdefault(criterion, {})[end] = by_letter.get(letter)
            broken = [c for c, v in choices.items() if None in v.values() or v["most"] == v["least"]]
            if broken:
                skipped.append(
                    f"participant {code} page {page['page']}: no usable answer for {', '.join(broken)}"
                )
                continue
            shown = [p["system"] for p in page["passages"]]
            answer = {"shown": shown, "choices": choices}
            lines.append({"participant": code, "item": page["case"], "answer": answer})
    return lines, skipped


def read_answers(path: Path) -> dict[str, dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    answers = {}
    for row in rows:
        code_column = next(key for key in row if key.strip().upper() == "PARTICIPANT CODE")
        answers[row[code_column].strip()] = row
    return answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--batch", default="0", help="which ground_truth_<batch>.json (default 0)")
    parser.add_argument("--slug", default="rome-human-eval")
    args = parser.parse_args()
    records = json.loads((args.reference_dir / f"ground_truth_{args.batch}.json").read_text(encoding="utf-8"))
    answers = read_answers(args.reference_dir / "anon_responses.csv")
    study = study_file(records, slug=args.slug, batch=args.batch)
    lines, skipped = response_lines(records, answers)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "rome-study.json").write_text(
        json.dumps(study, indent=1, ensure_ascii=False), encoding="utf-8"
    )
    with (args.out_dir / "rome-responses.jsonl").open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"{len(study['items'])} items, {len(lines)} responses from {len(records)} participants")
    for reason in skipped:
        print(f"left out: {reason}")


if __name__ == "__main__":
    main()
