"""The details dataset loads with ``datasets.load_dataset``, one config per benchmark: from an export's details
folder offline, and by repo id from the local Hub stand-in after a push. Every config is loaded and compared with
the export's own Parquet files and leaderboard.

``datasets`` runs in a fresh interpreter each time: its and huggingface_hub's endpoint, cache and offline
settings are read from the environment at import, and the cache lives in the test's temporary folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from memeval_core.export import space
from memeval_core.export.hub import push_space
from memeval_core.export.models import Leaderboard
from memeval_core.export.writer import export
from tests._data import SHARED_DATA, require
from tests.hub_standin import HUB_TOKEN, HubStandIn

# huggingface_hub's LFS upload passes raw bytes as `data=`, which httpx2 deprecates; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")

DATASET = "standin-user/memeval-details"
LOAD = """
import json, sys
import datasets
out = {}
for config in sys.argv[2:]:
    ds = datasets.load_dataset(sys.argv[1], config, split="train")
    out[config] = {
        "rows": ds.num_rows,
        "columns": ds.column_names,
        "first": ds[0],
        "last": ds[ds.num_rows - 1],
        "runs": sorted(set(ds["run_id"])),
    }
print(json.dumps(out, default=str))
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export of ../shared/data (PMB suites and QA benchmarks)."""
    require(SHARED_DATA / "precisionmembench")
    out = tmp_path_factory.mktemp("datasets") / "hf_export"
    export(SHARED_DATA, out, allow_errors=True)
    return out


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def load_every_config(source: str, configs: list[str], home: Path, **env: str) -> dict[str, Any]:
    """``datasets.load_dataset(source, config)`` of every config in a fresh interpreter with its cache in ``home``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    settings = {"HF_HOME": str(home), "HF_DATASETS_CACHE": str(home / "datasets"), "HF_HUB_DISABLE_TELEMETRY": "1"}
    done = subprocess.run(
        [sys.executable, "-c", LOAD, source, *configs],
        env={**clean, **settings, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def configs_of(card: str) -> dict[str, str]:
    """Config name -> data files of a dataset card's front matter."""
    meta = yaml.safe_load(card.split("---\n")[1])
    return {c["config_name"]: c["data_files"] for c in meta["configs"]}


def check_against_the_export(loaded: dict[str, Any], export_dir: Path) -> None:
    """Each config holds its Parquet file's rows, columns and values, and the leaderboard table's runs."""
    board = Leaderboard.model_validate_json((export_dir / "leaderboard.json").read_text(encoding="utf-8"))
    runs = {t.benchmark: sorted({r.run_id for r in t.rows}) for t in board.tables}
    assert sorted(loaded) == sorted(runs)
    for benchmark, got in loaded.items():
        table = pq.read_table(export_dir / space.DETAILS_DIR / f"{benchmark}.parquet")
        assert (got["rows"], got["columns"]) == (table.num_rows, table.column_names), benchmark
        assert got["first"] == _json(table.slice(0, 1).to_pylist()[0]), benchmark
        assert got["last"] == _json(table.slice(table.num_rows - 1).to_pylist()[0]), benchmark
        assert got["runs"] == runs[benchmark], benchmark


def test_the_details_folder_has_a_card_with_one_config_per_benchmark(exported: Path) -> None:
    details = exported / space.DETAILS_DIR
    configs = configs_of((details / "README.md").read_text(encoding="utf-8"))
    assert {f"{c}.parquet" for c in configs} == {p.name for p in details.glob("*.parquet")}
    assert all(files == f"{name}.parquet" for name, files in configs.items())
    assert {"pmb-single-turn", "pmb-session", "locomo"} <= set(configs)


def test_load_dataset_reads_every_config_of_the_export_folder_offline(exported: Path, tmp_path: Path) -> None:
    details = exported / space.DETAILS_DIR
    configs = list(configs_of((details / "README.md").read_text(encoding="utf-8")))
    offline = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    loaded = load_every_config(str(details), configs, tmp_path / "hf_home", **offline)
    check_against_the_export(loaded, exported)


def test_load_dataset_reads_every_config_of_the_pushed_dataset(exported: Path, hub: HubStandIn, tmp_path: Path) -> None:
    result = push_space(exported, "standin-user/memeval-board", token=HUB_TOKEN, dataset=DATASET)
    assert result.dataset is not None and result.dataset.status == "committed"
    card = hub.repo("dataset", DATASET).files["README.md"].data.decode()
    configs = list(configs_of(card))
    loaded = load_every_config(
        DATASET, configs, tmp_path / "hf_home_reader", HF_ENDPOINT=hub.url, HF_HUB_DISABLE_XET="1"
    )
    check_against_the_export(loaded, exported)
    # What datasets fetched: the card, then each config's one Parquet file, all from the stand-in.
    fetched = {r.path.rsplit("/", 1)[1] for r in hub.requests if r.method == "GET" and "/resolve/" in r.path}
    assert fetched >= {"README.md", *(f"{c}.parquet" for c in configs)}
