"""CSV cells a spreadsheet would run as formulas are neutralised; numbers stay numbers."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pandas as pd

from memeval_core import csvsafe
from memeval_core.leaderboard import csv_text

HOSTILE = ['=HYPERLINK("http://x","y")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(1+1)", "\tTAB", "\rCR"]


def test_cells() -> None:
    for text in HOSTILE:
        assert csvsafe.cell(text) == "'" + text
    assert csvsafe.cell("mem0") == "mem0"
    assert csvsafe.cell(-2) == -2 and csvsafe.cell(-0.5) == -0.5 and csvsafe.cell(None) is None


def test_frame_keeps_numbers_and_neutralises_text_and_headers() -> None:
    df = pd.DataFrame({"system": HOSTILE, "score": [-1.5, 2, 3, 4, 5, 6], "=x": [True] * 6})
    out = csvsafe.frame(df)
    assert list(out.columns) == ["system", "score", "'=x"]
    assert out["score"].tolist() == [-1.5, 2, 3, 4, 5, 6]
    assert all(v.startswith("'") for v in out["system"])
    assert df["system"].tolist() == HOSTILE, "the input is not changed"
    rows = list(csv.reader(io.StringIO(out.to_csv(index=False), newline="")))
    assert rows[1][1] == "-1.5"


def test_csv_text_rows() -> None:
    text = csv_text([{"provider": "=1+1", "passed": -3}])
    assert text.splitlines() == ["provider,passed", "'=1+1,-3"]


def test_the_cli_csv_is_safe(tmp_path: Path, pmb_results: Path) -> None:
    report = (pmb_results / "test-results/baseline/retrieval-report-tenure.json").read_text()
    (tmp_path / "r.json").write_text(report.replace('"provider": "tenure"', '"provider": "=HYPERLINK(1)"', 1))
    p = subprocess.run(
        [sys.executable, "-m", "memeval_core", "leaderboard", "--results", str(tmp_path), "--fixtures",
         str(pmb_results / "fixtures"), "--kind", "pmb", "--format", "csv"],
        capture_output=True, text=True, check=False, env={"MEMEVAL_CACHE_DIR": "off", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "'=HYPERLINK(1)" in p.stdout and ",=HYPERLINK" not in p.stdout
