"""Each input's licence, the cards' license field, and text that the details leave out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from memeval_core import licences
from memeval_core.catalogue import Catalogue, default_catalogue
from memeval_core.export.writer import export
from memeval_core.sync import sync_catalogue

MIT = "MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy"


def test_spdx_of_licence_texts() -> None:
    assert licences.spdx(MIT) == "MIT"
    assert licences.spdx("Apache License\n Version 2.0, January 2004") == "Apache-2.0"
    assert licences.spdx("Attribution-NonCommercial 4.0 International") == "CC-BY-NC-4.0"
    assert licences.spdx("- License: `LICENSE` = **Creative Commons Attribution-NonCommercial 4.0**") == "CC-BY-NC-4.0"
    assert licences.spdx("All rights reserved.") == licences.UNKNOWN


def test_nearest_statement_wins(tmp_path: Path) -> None:
    (tmp_path / "LICENSE").write_text(MIT)
    (tmp_path / "nc").mkdir()
    (tmp_path / "nc" / "PROVENANCE.md").write_text("# x\n- License: CC BY-NC 4.0\n")
    assert licences.of_file(tmp_path, "nc/deep/run.json") == "CC-BY-NC-4.0"
    assert licences.of_file(tmp_path, "other/run.json") == "MIT"
    assert licences.of_file(tmp_path / "nc" / "deep", "run.json") == licences.UNKNOWN, "never above the results root"


def test_the_shared_data_licences(shared_data: Path) -> None:
    cache: dict[str, str | None] = {}
    assert licences.of_file(shared_data, "precisionmembench/test-results/baseline/x.json", cache) == "MIT"
    assert licences.of_file(shared_data, "locomo/data/locomo10.json", cache) == "CC-BY-NC-4.0"
    assert licences.of_file(shared_data, "memobase/docs/x.json", cache) == "Apache-2.0"
    assert licences.of_file(shared_data, "locomo-audit/errors.json", cache) == "CC-BY-NC-4.0"
    assert licences.of_file(shared_data, "mflow-benchmarks/benchmarks/a.json", cache) == "MIT"


def test_card_licence() -> None:
    assert licences.card_licence({"MIT"}) == "mit"
    assert licences.card_licence({"MIT", "Apache-2.0"}) == "other"
    assert licences.card_licence({licences.UNKNOWN}) == "other"


@pytest.fixture
def mixed(shared_data: Path, tmp_path: Path) -> Path:
    root = tmp_path / "results"
    for sub in ("precisionmembench", "locomo", "memobase"):
        if not (shared_data / sub).is_dir():
            pytest.skip(f"{shared_data / sub} is absent")
        shutil.copytree(shared_data / sub, root / sub)
    return root


def test_export_keeps_non_commercial_text_out_unless_asked(mixed: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = export(mixed, out, allow_errors=True)
    by_path = {f.path: f.license for f in result.board.inputs}
    assert by_path["precisionmembench/fixtures/retrieval.cases.json"] == "MIT"
    assert {lic for p, lic in by_path.items() if p.startswith("memobase/")} == {"Apache-2.0"}
    assert result.board.text_withheld == {"locomo": ["CC-BY-NC-4.0"]}
    details = pq.read_table(out / "data/details/locomo.parquet")
    assert details.column("question").null_count == details.num_rows
    assert details.column("correct").null_count < details.num_rows, "scores stay"
    readme = (out / "README.md").read_text()
    assert "\nlicense: other\n" in readme and "## Licences" in readme and "`CC-BY-NC-4.0`" not in readme.split("##")[0]
    assert "- `locomo` (CC-BY-NC-4.0)" in readme
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["text_withheld"] == {"locomo": ["CC-BY-NC-4.0"]}

    full = export(mixed, tmp_path / "full", allow_errors=True, include_text=True)
    assert full.board.text_withheld == {}
    assert pq.read_table(tmp_path / "full/data/details/locomo.parquet").column("question").null_count == 0
    assert full.board.fingerprint == result.board.fingerprint, "the same inputs"


MEMOBASE_RUN = "memobase/docs/experiments/locomo-benchmark/fixture/memobase/memobase_eval_0503_3000.json"


def test_a_catalogued_file_takes_the_catalogue_licence(shared_data: Path, tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    shutil.copyfile(shared_data / MEMOBASE_RUN, tmp_path / "runs" / "renamed.json")
    (tmp_path / "runs" / "mine.json").write_text("{}")
    (tmp_path / "LICENSE").write_text(MIT)
    assert licences.of_file(tmp_path, "runs/renamed.json") == "Apache-2.0", "the bytes are memobase's"
    assert licences.of_file(tmp_path, "runs/mine.json") == "MIT", "not catalogued: the LICENSE file"
    locomo = next(e for e in default_catalogue().entries if e.importer == "locomo-dataset")
    assert licences.of_file(tmp_path, "runs/mine.json", sha256=locomo.sha256) == "CC-BY-NC-4.0"


def test_export_of_a_synced_folder_takes_licences_from_the_catalogue(shared_data: Path, tmp_path: Path) -> None:
    wanted = Catalogue(
        entries=tuple(
            e
            for e in default_catalogue().entries
            if e.target.split("/")[0] in ("precisionmembench", "locomo", "memobase")
        )
    )
    root = tmp_path / "results"
    assert len(sync_catalogue(root, catalogue=wanted, from_dir=shared_data).fetched) == len(wanted.entries)
    assert not list(root.rglob("LICENSE*")) and not list(root.rglob("PROVENANCE.md"))
    result = export(root, tmp_path / "out", allow_errors=True)
    by_path = {f.path: f.license for f in result.board.inputs}
    assert by_path["precisionmembench/fixtures/retrieval.cases.json"] == "MIT"
    assert by_path[MEMOBASE_RUN] == "Apache-2.0"
    assert result.board.text_withheld == {"locomo": ["CC-BY-NC-4.0"]}
