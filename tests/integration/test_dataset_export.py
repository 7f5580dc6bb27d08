"""Issue 42: a study as a dataset release (Parquet plus a dataset card from its datasheet),
loaded offline with the Hugging Face datasets library, pseudonymised as the other exports."""

import csv
import zipfile

import pytest

from annotation.errors import InputError
from annotation.services.authoring.study_changes import start_export
from annotation.services.exports.export import DATASET_PSEUDONYMS_ONLY, export_study
from tests.helpers.reports import game_study

pytestmark = pytest.mark.django_db


def test_a_dataset_release_loads_offline_with_datasets_and_holds_pseudonyms_only(
    tmp_path, monkeypatch, owner
):
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    study = game_study(owner=owner)
    result = export_study(study, fmt="dataset", path=tmp_path / "release.zip")
    export_study(study, fmt="csv", path=tmp_path / "answers.csv", use_copy=False)
    assert result.rows == 9
    folder = tmp_path / "release"
    with zipfile.ZipFile(result.path) as zipped:
        zipped.extractall(folder)
    card = (folder / "README.md").read_text()
    assert card.startswith("---\npretty_name: ")
    assert "- config_name: responses\n  data_files: data/responses.parquet\n  default: true" in card
    assert "\n# Human evaluation datasheet" not in card and "\n## Human evaluation datasheet" in card
    assert "**3.2.1** How many evaluators took part?" in card

    cache = str(tmp_path / "cache")
    loaded = datasets.load_dataset(
        "parquet", data_files=str(folder / "data/responses.parquet"), cache_dir=cache
    )
    responses = loaded["train"]
    with open(tmp_path / "answers.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(responses["participant"]) == sorted(row["participant"] for row in rows)
    assert {"platform_worker_id"}.isdisjoint(responses.column_names)
    assert responses.features["is_attention_check"].dtype == "bool"
    assert responses.features["duration_seconds"].dtype == "float64"
    items = datasets.load_dataset(str(folder), "items", cache_dir=cache)["train"]
    assert sorted(items["item"]) == ["A", "B", "C", "D", "check"]

    with pytest.raises(InputError):
        export_study(study, fmt="dataset", path=tmp_path / "ids.zip", include_platform_ids=True)
    with pytest.raises(InputError) as refused:
        start_export(user=owner, study=study, parameters={"format": "dataset", "include_platform_ids": True})
    assert refused.value.errors == {"include_platform_ids": [DATASET_PSEUDONYMS_ONLY]}
