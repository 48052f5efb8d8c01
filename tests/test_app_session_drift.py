"""The session drift page over the public PMB data (Streamlit AppTest)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = "pages/session_drift.py"
TURNS = [
    "0 · establishes_topic",
    *(f"{i} · drift" for i in range(1, 9)),
    "9 · implicit_continuation",
    "10 · re_entry",
    "0 · implicit_continuation (case 2)",
]


@pytest.fixture(autouse=True)
def pmb_env(pmb_results: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app reads the public PMB data."""
    monkeypatch.setenv("MEMEVAL_RESULTS", str(pmb_results))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)
    return pmb_results


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """Bytes handed to every download button, by file name."""
    seen: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(
        self: MemoryMediaFileStorage, data: str | bytes, mimetype: str, kind: Any, filename: str | None = None
    ) -> str:
        if filename is not None and isinstance(data, bytes):
            seen[filename] = data
        return original(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return seen


def run_app(**query: str) -> AppTest:
    """The session drift page after its first run with the given URL query parameters."""
    at = AppTest.from_file(str(APP), default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.switch_page(PAGE).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def table(at: AppTest, *columns: str) -> pd.DataFrame:
    """The one shown table having exactly these leading columns."""
    found = [d.value for d in at.dataframe if list(d.value.columns[: len(columns)]) == list(columns)]
    assert len(found) == 1, f"{columns}: {len(found)} tables"
    value: pd.DataFrame = found[0]
    return value


def specs(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_gbrain_is_flagged_as_returning_nothing() -> None:
    at = run_app()
    assert "returned nothing on some turns" in at.warning[0].value
    empty = table(at, "display_name", "turns", "returned_nothing").set_index("display_name")
    assert (empty.loc["gbrain", "turns"], empty.loc["gbrain", "returned_nothing"]) == (12, 12)
    assert empty.loc["gbrain", "required_missing"] == 11
    assert "tenure" in empty.index  # tenure's turn 9: nothing returned, nothing required
    harness = specs(at)[0]
    gbrain = next(t for t in harness["data"] if t["name"] == "gbrain")
    # No point on gbrain's line: an empty answer is not drawn as drift 0.
    assert gbrain["y"] == [None] * 12
    nothing = next(t for t in harness["data"] if t["name"] == "returned nothing")
    assert nothing["x"] == TURNS
    assert all("gbrain" in c for c in nothing["customdata"])
    assert nothing["marker"]["symbol"] == "circle-open"
    assert all(y < 0 for y in nothing["y"])
    assert harness["layout"]["yaxis"]["ticktext"][0] == "returned nothing"


def test_turn_axis_and_drift_lines() -> None:
    harness, topic, _ = specs(run_app())
    assert harness["layout"]["xaxis"]["title"]["text"] == "turn index · label"
    assert harness["layout"]["xaxis"]["categoryarray"] == TURNS
    mem0 = next(t for t in harness["data"] if t["name"] == "mem0")
    assert mem0["x"] == TURNS
    assert mem0["y"][0] == pytest.approx(1 - 1 / 18, abs=0.1)  # mostly noise
    assert all(s == "x" for s in mem0["marker"]["symbol"])  # mem0 fails every turn
    tenure = next(t for t in harness["data"] if t["name"] == "tenure")
    assert tenure["y"][:9] == [0.0] * 9
    assert set(tenure["marker"]["symbol"]) == {"circle"}
    assert "noise ids" in tenure["hovertemplate"]
    # Eight drift turns shaded.
    assert len(harness["layout"]["shapes"]) == 8
    assert topic["layout"]["yaxis"]["title"]["text"] == "topic drift (README definition)"


def test_both_drift_definitions_explained() -> None:
    text = " ".join(m.value for m in run_app().markdown)
    assert "**Harness drift**" in text and "`1 − precision`" in text
    assert "**Topic drift** (the benchmark README's definition)" in text
    assert "not isolation" in text


def test_noise_and_drift_turn_topics(downloads: dict[str, bytes]) -> None:
    at = run_app()
    topics = table(at, "case_id", "turn_index", "topics", "introduced")
    assert len(topics) == 8
    assert topics["introduced"].iloc[0] == "kubernetes-probes"
    noise = table(at, "display_name", "turn", "topics", "passed", "noise_ids")
    assert len(noise) == 20
    first = noise.iloc[0]
    assert (first["display_name"], first["turn"]) == ("yourmemory", "10 · re_entry")
    assert first["noise_ids"] == "b-kubernetes-entity, b-react-entity"
    saved = pd.read_csv(io.BytesIO(downloads["memeval-session-noise.csv"]))
    assert list(saved["noise_ids"]) == list(noise["noise_ids"])
    timeline = table(at, "display_name", "run_id", "case_id")
    assert len(timeline) == 132
    assert set(timeline.loc[timeline["display_name"] == "gbrain", "status"]) == {
        "returned nothing: required belief missing",
        "returned nothing: nothing required",
    }


def test_latency_against_single_turn_p50() -> None:
    at = run_app()
    ratios = table(at, "display_name", "session_run_id").set_index("display_name")
    assert ratios.loc["tenure", "ratio"] == pytest.approx(4.89, abs=0.005)
    assert ratios.loc["mem0", "ratio"] == pytest.approx(5.82, abs=0.005)
    assert ratios.loc["tenure", "single_turn_p50_ms"] == 9.77
    chart = specs(at)[2]
    assert chart["layout"]["yaxis"]["type"] == "log"
    assert chart["layout"]["yaxis"]["title"]["text"] == "× single-turn p50"
    assert [s["y0"] for s in chart["layout"]["shapes"]] == [1]
    absolute = specs(run_app(latency="absolute"))[2]
    assert absolute["layout"]["yaxis"]["title"]["text"] == "latency (ms)"
