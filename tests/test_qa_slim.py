"""Large files of known layouts are read without their bulky fields: exactly the full parse minus those keys."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from _data import SHARED_DATA, require

from memeval_core.qa import ingest, slim
from memeval_core.qa.importers import cognitive_memory, mem0_eval
from memeval_core.qa.ingest import load_qa
from memeval_core.workers import WORKERS_ENV

MEM0_SHARDS = SHARED_DATA / "mflow-benchmarks" / "benchmarks" / "locomo-mem0" / "results" / "per_conversation"
LAYOUTS = ingest.SLIM_LAYOUTS


def _without_bulky(data: Any, layout: slim.Layout) -> Any:
    for item in data[layout.items]:
        for key in layout.bulky:
            item.pop(key, None)
    return data


def test_shared_data_reads_slim_and_equals_the_full_parse_without_the_bulky_keys() -> None:
    root = require(SHARED_DATA)
    by_format: dict[str, int] = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            if not name.endswith(".json"):
                continue
            raw = (Path(dirpath) / name).read_bytes()
            data = slim.decode(raw, LAYOUTS)
            if data is None:
                assert len(raw) < slim.MIN_BYTES or not any(f'"{k}"'.encode() in raw for k in ("retrieved_contents",))
                continue
            full = orjson.loads(raw)
            layout = next(lay for lay in LAYOUTS if set(full) <= set(lay.top_keys))
            assert data == _without_bulky(full, layout)
            assert all(not set(layout.bulky) & set(item) for item in data[layout.items])
            by_format[layout.format] = by_format.get(layout.format, 0) + 1
    # mflow's nine per-conversation mem0 files and cognitive-memory's eight largest per_question files.
    assert by_format == {"mem0-eval": 9, "cognitive-memory": 8}


def _document(n: int = 40, **item_extra: Any) -> dict[str, Any]:
    items = [
        {"question": f"q{i}?", "answer": "a", "response": "a", "llm_score": 1, "speaker_1_memories": [{"m": "x" * 50}]}
        | item_extra
        for i in range(n)
    ]
    return {"summary": {"conv_idx": 1}, "results": items}


@pytest.fixture
def small_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slim, "MIN_BYTES", 64)


@pytest.mark.usefixtures("small_files")
@pytest.mark.parametrize(
    ("doc", "why"),
    [
        ({**_document(), "extra": 1}, "a top-level key the layout does not declare"),
        (_document(unknown_key=1), "an item key the layout does not declare"),
        ({"summary": {}, "results": {"0": {}}}, "items that are not a list"),
        ({"summary": {}, "results": [1, 2]}, "items that are not objects"),
        (_document(response_time=1e300), "a number out of range (below, written as 1e400)"),
        ([{"question": "q", "speaker_1_memories": []}], "a bare list"),
        ({"summary": {}, "results": [{"question": "q"}] * 40}, "no bulky key near the start"),
    ],
)
def test_anything_else_is_left_to_the_ordinary_parse(doc: Any, why: str) -> None:
    assert slim.decode(json.dumps(doc).replace("1e+300", "1e400").encode(), LAYOUTS) is None, why


@pytest.mark.usefixtures("small_files")
@pytest.mark.parametrize("wide", [2**64, -(2**63) - 1, 10**30])
def test_integers_wider_than_64_bits_are_left_to_the_ordinary_parse(tmp_path: Path, wide: int) -> None:
    # orjson reads them as floats, msgspec as integers: only the ordinary parse gives the ordinary result.
    for doc in (_document(answer_tokens=wide), {**_document(), "summary": {"n": [1, {"deep": wide}]}}):
        assert slim.decode(json.dumps(doc).encode(), LAYOUTS) is None
        (tmp_path / "r.json").write_text(json.dumps(doc))
        assert not ingest.read_source(tmp_path / "r.json", "r.json").slim
    for edge in (2**64 - 1, -(2**63)):
        assert slim.decode(json.dumps(_document(answer_tokens=edge)).encode(), LAYOUTS) is not None


@pytest.mark.usefixtures("small_files")
@pytest.mark.parametrize(
    ("good", "bad", "message"),
    [
        (b'[{"m": "x', b'[{"m": x', "not valid JSON"),
        # msgspec steps over the bulky values without reading their bytes; orjson would have refused the file.
        (b'"xxxx', b'"x\xffxx', "not UTF-8 text"),
    ],
)
def test_a_broken_bulky_value_is_left_to_the_ordinary_parse(
    tmp_path: Path, good: bytes, bad: bytes, message: str
) -> None:
    raw = json.dumps(_document()).encode().replace(good, bad, 1)
    assert raw != json.dumps(_document()).encode() and slim.decode(raw, LAYOUTS) is None
    (tmp_path / "r.json").write_bytes(raw)
    with pytest.raises(ingest.IngestError, match=message):
        ingest.read_source(tmp_path / "r.json", "r.json")


@pytest.mark.usefixtures("small_files")
def test_valid_utf8_beyond_ascii_reads_slim() -> None:
    accented = json.dumps(_document(answer="café"), ensure_ascii=False).encode()
    assert not accented.isascii() and slim.decode(accented, LAYOUTS) is not None


def test_small_files_are_parsed_whole() -> None:
    raw = json.dumps(_document(3)).encode()
    assert len(raw) < slim.MIN_BYTES and slim.decode(raw, LAYOUTS) is None


@pytest.mark.usefixtures("small_files")
def test_read_source_marks_slim_data_unless_asked_for_the_whole_file(tmp_path: Path) -> None:
    doc = _document()
    path = tmp_path / "conv1_full_eval.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(doc).encode())  # a BOM does not stand in the way
    src = ingest.read_source(path, "conv1_full_eval.json")
    assert src.slim and src.data == _without_bulky(json.loads(json.dumps(doc)), mem0_eval.SLIM)
    whole = ingest.read_source(path, "conv1_full_eval.json", whole=True)
    assert not whole.slim and whole.data == doc and whole.sha256 == src.sha256


def test_a_layout_keeps_its_items_among_the_top_level_keys_and_bulky_keys_apart() -> None:
    with pytest.raises(ValueError, match="items key"):
        slim.Layout("x", ("a",), "items", ("q",), ("big",))
    with pytest.raises(ValueError, match="bulky keys"):
        slim.Layout("x", ("items",), "items", ("q", "big"), ("big",))
    assert {layout.format for layout in LAYOUTS} == {mem0_eval.FORMAT, cognitive_memory.FORMAT}


def test_a_load_reads_the_same_with_and_without_slim_files(monkeypatch: pytest.MonkeyPatch) -> None:
    root = require(SHARED_DATA)
    monkeypatch.setenv(WORKERS_ENV, "1")
    slimmed = load_qa(root)
    monkeypatch.setattr(ingest, "SLIM_LAYOUTS", ())
    whole = load_qa(root)
    assert slimmed.runs == whole.runs and slimmed.errors == whole.errors and slimmed.skipped == whole.skipped
    assert [r.run_id for r in slimmed.runs] == [r.run_id for r in whole.runs]


def test_a_mapping_may_name_a_bulky_field_of_a_slim_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shard = require(MEM0_SHARDS / "conv1_full_eval.json")
    (tmp_path / "mine").mkdir()
    shutil.copy(shard, tmp_path / "mine" / "conv1_full_eval.json")
    mapping = {
        "memeval_mapping": 1,
        "file": "conv1_full_eval.json",
        "rows": "results",
        "benchmark": "mine",
        "system": "mapped",
        "fields": {"question_id": "question", "question": "question", "answer": "response",
                   "retrieved_ids": "speaker_1_memories"},
        "judges": [{"name": "llm", "field": "llm_score", "scale": "binary"}],
    }  # fmt: skip
    (tmp_path / "mine" / "mapping.json").write_text(json.dumps(mapping))
    monkeypatch.setenv(WORKERS_ENV, "1")
    load = load_qa(tmp_path)
    mapped = next((r for r in load.runs if r.run.run.system == "mapped"), None)
    assert mapped is not None, load.errors
    full = orjson.loads(shard.read_bytes())["results"]
    # The memories, which the slim read leaves out, became retrieved ids (one item retrieved none).
    assert sum(bool(q.retrieved_ids) for q in mapped.run.questions) == sum(bool(i["speaker_1_memories"]) for i in full)
    assert len(mapped.run.questions) == len(full) == 81


@pytest.mark.usefixtures("small_files")
def test_the_files_key_order_is_kept(tmp_path: Path) -> None:
    doc = {"results": _document()["results"], "summary": {"conv_idx": 1}}
    data = slim.decode(json.dumps(doc).encode(), LAYOUTS)
    assert data is not None and list(data) == ["results", "summary"]  # a sniffer may read the first value
    other_list = {"summary": [{"golden_answer": "a", "grade": True}], "results": _document()["results"]}
    assert slim.decode(json.dumps(other_list).encode(), LAYOUTS) is None  # a list outside the items key
    assert slim.decode(json.dumps({"summary": {}, "results": {"a": 1}}).encode(), LAYOUTS) is None
