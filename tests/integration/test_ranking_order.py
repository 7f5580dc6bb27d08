"""Ranking pages: the display order is drawn per page, recorded, shown the same way when the
page is reloaded, random across pages, and the letters clicked are stored as the systems
they stood for. Imports take the same shape with systems, including the released ROME data."""

import csv
import json
import re
import subprocess
import sys
from html import unescape
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import Assignment, Response
from annotation.services.authoring.studies import load_study_file
from tests.conftest import ROOT
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.flow import start, task_action

pytestmark = pytest.mark.django_db
FORM = {"consistency-most": "C", "consistency-least": "A", "fluency-most": "B", "fluency-least": "C"}


def ranking_study(example_study_file, **fields):
    data = example_study_file("ranking")
    data.update(fields)
    return load_study_file(data).study


def passage_texts(html: str) -> list[str]:
    return [unescape(text) for text in re.findall(r'<div class="passage"><p>(.*?)</p>', html, flags=re.S)]


def test_the_page_follows_the_recorded_order_and_the_answer_maps_letters(client, example_study_file):
    study = ranking_study(example_study_file)
    html = start(client, study.slug)
    assignment = Assignment.objects.get()
    shown = assignment.state["shown"]
    texts = {p["system"]: p["text"] for p in assignment.item.payload["passages"]}
    assert passage_texts(html) == [texts[system] for system in shown]
    again = client.get(f"/s/{study.slug}/task/").content.decode()
    assert passage_texts(again) == passage_texts(html)  # a reload shows the same page
    client.post(task_action(html), FORM)
    response = Response.objects.get()
    assert response.display_order == {"shown": shown}
    assert response.answer == {
        "shown": shown,
        "choices": {
            "consistency": {"most": shown[2], "least": shown[0]},
            "fluency": {"most": shown[1], "least": shown[2]},
        },
    }


def test_orders_vary_across_pages_and_participants(example_study_file):
    study = ranking_study(example_study_file, annotations_per_item=40, items_per_session=4)
    orders = set()
    for number in range(6):
        client = Client()
        html = start(client, study.slug, f"?PROLIFIC_PID={prolific_id(f'order-{number}')}")
        for _ in range(4):
            client.post(task_action(html), FORM)
            html = client.get(f"/s/{study.slug}/task/", follow=True).content.decode()
    for response in Response.objects.all():
        orders.add(tuple(response.display_order["shown"]))
        letters = {system: "ABC"[i] for i, system in enumerate(response.display_order["shown"])}
        assert letters[response.answer["choices"]["consistency"]["most"]] == "C"
    assert Response.objects.count() == 24
    assert len(orders) >= 4  # 24 draws of 6 possible orders


def run_import(tmp_path, slug, lines) -> str:
    path = tmp_path / "ranking.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    out = StringIO()
    call_command("importresponses", slug, str(path), stdout=out)
    return out.getvalue()


def test_importresponses_takes_systems_and_keeps_the_order_as_display_order(tmp_path, example_study_file):
    study = ranking_study(example_study_file)
    shown = ["GPT-2 XL", "ROME", "FT_L"]
    answer = {
        "shown": shown,
        "choices": {
            "consistency": {"most": "ROME", "least": "GPT-2 XL"},
            "fluency": {"most": "GPT-2 XL", "least": "FT_L"},
        },
    }
    assert "Imported 1 responses" in run_import(
        tmp_path, study.slug, [{"participant": "p1", "item": "louvre-madrid", "answer": answer}]
    )
    assert Response.objects.get().display_order == {"shown": shown}
    bad = {**answer, "choices": {**answer["choices"], "fluency": {"most": "ROME", "least": "ROME"}}}
    with pytest.raises(CommandError, match=r"line 1: answer\.choices\.fluency\.least"):
        run_import(tmp_path, study.slug, [{"participant": "p2", "item": "louvre-madrid", "answer": bad}])
    assert Response.objects.count() == 1


def reference_folder(tmp_path):
    """Two participants, two cases, in the released files' layout (texts of our own)."""
    folder = tmp_path / "reference"
    folder.mkdir()
    systems = ["ROME", "FT_L", "GPT-2 XL"]
    records = []
    for code, rotation in (("p1", 0), ("p2", 1)):
        record = {"participant": code}
        for page, case in enumerate(("case_1", "case_2"), start=1):
            order = systems[rotation:] + systems[:rotation]
            record[f"page_{page}_fname"] = f"{case}.json"
            record[f"page_{page}_counterfactual"] = f"Fact of {case}"
            for letter, system in zip("abc", order, strict=True):
                record[f"page_{page}_passage_{letter}"] = f"{case} text by {system}"
                record[f"page_{page}_passage_{letter}_label"] = system
        records.append(record)
    (folder / "ground_truth_0.json").write_text(json.dumps(records))
    header = ["Timestamp", "PARTICIPANT CODE\n"]
    for page in (1, 2):
        header += [
            f"PAGE {page}, CONSISTENCY [MOST CONSISTENT?]",
            f"PAGE {page}, CONSISTENCY [LEAST CONSISTENT?]",
        ]
        header += [f"PAGE {page}, FLUENCY [MOST FLUENT?]", f"PAGE {page}, FLUENCY [LEAST FLUENT?]"]
    rows = [
        ["t", "p1", "A", "C", "B", "A", "A", "B", "C", "A"],
        ["t", "p2", "B", "A", "C", "B", "", "B", "C", "A"],
    ]
    with (folder / "anon_responses.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return folder


def test_the_rome_release_converts_to_a_study_and_an_import(tmp_path):
    out = tmp_path / "converted"
    converter = ROOT / "docs" / "tools" / "rome_to_ranking.py"
    command = [sys.executable, str(converter), str(reference_folder(tmp_path)), str(out)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    assert "2 items, 3 responses from 2 participants" in result.stdout
    assert "left out: participant p2 page 2: no usable answer for consistency" in result.stdout
    call_command("loadstudy", str(out / "rome-study.json"), stdout=StringIO())
    call_command("importresponses", "rome-human-eval", str(out / "rome-responses.jsonl"), stdout=StringIO())
    p1 = {r.item.external_id: r for r in Response.objects.filter(participant__platform_worker_id="p1")}
    assert p1["case_1"].answer == {
        "shown": ["ROME", "FT_L", "GPT-2 XL"],
        "choices": {
            "consistency": {"most": "ROME", "least": "GPT-2 XL"},
            "fluency": {"most": "FT_L", "least": "ROME"},
        },
    }
    p2 = Response.objects.get(participant__platform_worker_id="p2")
    assert p2.display_order == {"shown": ["FT_L", "GPT-2 XL", "ROME"]}
    assert p2.answer["choices"]["consistency"] == {"most": "GPT-2 XL", "least": "FT_L"}
    assert p1["case_2"].assignment.position == 2
