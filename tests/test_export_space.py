"""The Space around an export: front matter, Markdown summary (inert report text), Dockerfile, pins, app files."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml

from memeval_core.export import space
from memeval_core.export.models import Leaderboard
from tests.test_export_models import doc, pmb_row

ROOT = Path(__file__).resolve().parents[1]
DATE = dt.date(2026, 1, 2)


def board_with(names: list[str], **row: Any) -> Leaderboard:
    """A leaderboard whose single-turn table has one row per name, ranks in order."""
    d = doc()
    d["tables"][0]["rows"] = [pmb_row(rank=i, display_name=n, run_id=f"r{i}", **row) for i, n in enumerate(names, 1)]
    return Leaderboard.model_validate(d)


def front_matter(text: str) -> dict[str, Any]:
    assert text.startswith("---\n")
    head = text.split("\n---\n", 1)[0][4:]
    meta: dict[str, Any] = yaml.safe_load(head)
    return meta


def test_front_matter_declares_a_docker_leaderboard_space() -> None:
    meta = front_matter(space.readme(board_with(["tenure"]), space.SpaceOptions(), DATE))
    assert meta["sdk"] == "docker"
    assert meta["app_port"] == 8501
    assert meta["tags"][0] == "leaderboard"
    assert meta["title"] == "memeval leaderboard"
    assert meta["license"] == "other", "inputs of unknown licence: other, with the table in the card"
    mit = board_with(["tenure"])
    mit = mit.model_copy(update={"inputs": [f.model_copy(update={"license": "MIT"}) for f in mit.inputs]})
    assert front_matter(space.readme(mit, space.SpaceOptions(), DATE))["license"] == "mit"
    assert front_matter(space.readme(mit, space.SpaceOptions(license="cc-by-4.0"), DATE))["license"] == "cc-by-4.0"
    assert {"emoji", "colorFrom", "colorTo", "short_description"} <= meta.keys()
    assert len(meta["short_description"]) <= 60


def test_front_matter_quotes_user_text() -> None:
    options = space.SpaceOptions(title='Board: "x" # y', short_description="a: b")
    meta = front_matter(space.readme(board_with(["tenure"]), options, DATE))
    assert meta["title"] == 'Board: "x" # y'
    assert meta["short_description"] == "a: b"


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="longer than 60"):
        space.SpaceOptions(short_description="x" * 61)
    with pytest.raises(ValueError, match="leaderboard"):
        space.SpaceOptions(tags=("memory",))


def test_summary_shows_the_top_rows_with_their_numbers() -> None:
    names = [f"sys{i}" for i in range(12)]
    text = space.readme(board_with(names), space.SpaceOptions(), DATE, top=3)
    lines = text.splitlines()
    assert "Top 3 of 12 runs." in lines
    assert "| 1 | `sys0` | 9/77 | 0 | 0.0558 | 0.9884 | 64.94 | ✓ |" in lines
    assert "| 3 | `sys2` | 9/77 | 0 | 0.0558 | 0.9884 | 64.94 | ✓ |" in lines
    assert not any("`sys3`" in line for line in lines)
    assert "- Exported: 2026-01-02" in lines
    assert f"- Input fingerprint: `{board_with(names).fingerprint}`" in lines
    assert "python -m memeval_core export --results RESULTS_DIR --out hf_export/" in lines


def test_unverified_rows_say_how_many_mismatches() -> None:
    board = board_with(["bad"], verified=False, mismatches=["a", "b"])
    assert "| 1 | `bad` | 9/77 | 0 | 0.0558 | 0.9884 | 64.94 | ✗ 2 mismatches |" in space.readme(
        board, space.SpaceOptions(), DATE
    )


@pytest.mark.parametrize(
    ("text", "cell"),
    [
        ("tenure", "`tenure`"),
        ("*x* [l](http://e.org) <b>@u</b>", "`*x* [l](http://e.org) <b>@u</b>`"),
        ("a|b", "`a\\|b`"),
        ("a`b", "``a`b``"),
        ("`x``", "``` `x`` ```"),
        ("two\nlines", "`two lines`"),
    ],
)
def test_report_text_becomes_an_inert_code_span(text: str, cell: str) -> None:
    assert space.md_code(text) == cell


def test_hostile_display_name_cannot_break_the_table_or_front_matter() -> None:
    evil = "x |\n---\n<script>alert(1)</script> [a](javascript:1) | y"
    text = space.readme(board_with([evil]), space.SpaceOptions(), DATE)
    (row,) = [line for line in text.splitlines() if line.startswith("| 1 |")]
    # Nine unescaped pipes delimit the eight cells; the name's own pipes are escaped.
    assert row.replace("\\|", "").count("|") == 9
    assert "\\|" in row
    assert front_matter(text)["sdk"] == "docker"
    assert text.count("\n---\n") == 1


def test_export_date_follows_source_date_epoch() -> None:
    assert space.export_date({"SOURCE_DATE_EPOCH": "86400"}) == dt.date(1970, 1, 2)
    assert space.export_date({"SOURCE_DATE_EPOCH": "1767312000"}) == dt.date(2026, 1, 2)
    assert space.export_date({}) == dt.datetime.now(tz=dt.UTC).date()
    with pytest.raises(ValueError, match="SOURCE_DATE_EPOCH"):
        space.export_date({"SOURCE_DATE_EPOCH": "yesterday"})


def test_dockerfile_runs_the_app_read_only_on_the_snapshot() -> None:
    text = space.dockerfile()
    assert text.startswith("FROM python:3.11-slim\n")
    assert "MEMEVAL_RESULTS=/app/data/snapshot" in text
    assert "MEMEVAL_READ_ONLY=1" in text
    assert "RUN pip install --no-cache-dir -r requirements.txt" in text
    assert '"streamlit", "run", "app.py", "--server.port", "8501", "--server.address", "0.0.0.0"' in text
    assert "EXPOSE 8501" in text


def test_requirements_are_the_runtime_pins(tmp_path: Path) -> None:
    text = space.requirements(ROOT)
    pins = [line for line in text.splitlines() if not line.startswith("#")]
    project = [
        line.split("#")[0].strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    ]
    assert pins == project
    assert all("==" in p for p in pins)
    assert any(p.startswith("streamlit==") for p in pins)
    (tmp_path / "requirements.txt").write_text("streamlit>=1\n")
    with pytest.raises(ValueError, match="not an exact pin"):
        space.requirements(tmp_path)


def test_app_files_are_the_app_and_nothing_else() -> None:
    files = space.app_files(ROOT)
    assert files == sorted(files)
    assert {"app.py", "pages/leaderboard.py", "pages/ui.py", "memeval_core/__init__.py"} <= set(files)
    assert ".streamlit/config.toml" in files
    assert "memeval_core/export/writer.py" in files
    assert not any(f.startswith(("tests/", "docs/", "results/", "hf_export/")) or "__pycache__" in f for f in files)
    assert all(
        f.endswith(".py") or (f.startswith("memeval_core/") and f.endswith(".json"))
        for f in files
        if f != ".streamlit/config.toml"
    )
    assert {"memeval_core/catalogue.json", "memeval_core/judge/prompts.json"} <= set(files)


def test_dataset_card_has_one_config_per_benchmark() -> None:
    card = space.dataset_card(board_with(["tenure"]), "me/board", space.SpaceOptions())
    meta = front_matter(card)
    assert meta["configs"] == [{"config_name": "pmb-single-turn", "data_files": "data/pmb-single-turn.parquet"}]
    # The export's details folder carries the same card with the files beside it.
    here = front_matter(space.dataset_card(board_with(["tenure"]), None, space.SpaceOptions(), data_dir=""))
    assert here["configs"] == [{"config_name": "pmb-single-turn", "data_files": "pmb-single-turn.parquet"}]
    assert "`me/board`" in card
