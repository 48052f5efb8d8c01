"""The one directory walker: confinement to the results root, special files, limits, nesting depth, leftovers."""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import pytest

from memeval_core import settings, tree


def write(path: Path, text: str = "{}") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_walk_order_hidden_and_suffixes(tmp_path: Path) -> None:
    for rel in ("b.json", "a.json", "sub/z.json", "sub/a.csv", ".hidden.json", ".git/x.json", "notes.md", "a/y.json"):
        write(tmp_path / rel)
    listing = tree.walk(tmp_path, (".json", ".csv"))
    assert [e.rel for e in listing.files] == ["a.json", "b.json", "a/y.json", "sub/a.csv", "sub/z.json"]
    assert listing.refused == ()
    assert [e.rel for e in tree.walk(tmp_path).files][:3] == ["a.json", "b.json", "notes.md"]


def test_links_out_of_the_root_fifos_and_devices_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = write(tmp_path / "secret.json", '{"password": "hunter2"}')
    write(root / "ok.json")
    (root / "out.json").symlink_to(outside)
    (root / "in.json").symlink_to(root / "ok.json")
    (root / "zero.json").symlink_to("/dev/zero")
    (root / "dangling.json").symlink_to(tmp_path / "missing.json")
    os.mkfifo(root / "pipe.json")
    (root / "folder").symlink_to(tmp_path, target_is_directory=True)
    listing = tree.walk(root, (".json",))
    assert [e.rel for e in listing.files] == ["in.json", "ok.json"]
    reasons = {r.rel: r.reason for r in listing.refused}
    assert reasons["out.json"] == reasons["zero.json"] == reasons["dangling.json"]
    assert "outside the results directory" in reasons["out.json"]
    assert "not a regular file" in reasons["pipe.json"]
    assert set(reasons) == {"out.json", "zero.json", "dangling.json", "pipe.json"}


def test_limits_refuse_large_files_and_too_many(tmp_path: Path) -> None:
    for i in range(5):
        write(tmp_path / f"{i}.json", "x" * 100)
    write(tmp_path / "big.json", "x" * 5000)
    limits = settings.Limits(max_file_bytes=1000, max_files=3, max_total_bytes=10**9)
    listing = tree.walk(tmp_path, (".json",), limits)
    assert [e.rel for e in listing.files] == ["0.json", "1.json", "2.json"]
    reasons = {r.rel: r.reason for r in listing.refused}
    assert "per file" in reasons["big.json"]
    assert "more than 3 files" in reasons["3.json"]
    total = tree.walk(tmp_path, (".json",), settings.Limits(max_total_bytes=250))
    assert [e.rel for e in total.files] == ["0.json", "1.json"]


@pytest.mark.parametrize(
    "name",
    [
        "../outside.csv",
        "../missing.csv",
        "sub/../../outside.csv",
        "/etc/passwd",
        "/nonexistent/file.csv",
        "C:/x.csv",
        "..\\outside.csv",
        "link.csv",
        "dangling.csv",
        ".hidden.csv",
        "pipe.csv",
    ],
)
def test_confine_refuses_with_one_sentence_whatever_exists(tmp_path: Path, name: str) -> None:
    root = tmp_path / "root"
    write(root / "ok.csv", "a\n1\n")
    write(tmp_path / "outside.csv", "password\nhunter2\n")
    write(root / ".hidden.csv", "a\n1\n")
    (root / "link.csv").symlink_to(tmp_path / "outside.csv")
    (root / "dangling.csv").symlink_to(tmp_path / "nothing.csv")
    os.mkfifo(root / "pipe.csv")
    with pytest.raises(tree.RefusedPathError) as info:
        tree.confine(root, name)
    message = str(info.value)
    assert message in (
        tree.OUTSIDE,
        "names its file with an absolute or malformed path; give a path relative to itself",
    )
    assert "hunter2" not in message and str(tmp_path) not in message


def test_existing_and_missing_targets_read_the_same(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    write(tmp_path / "exists.csv", "a\n")
    messages = set()
    for name in ("../exists.csv", "../does-not-exist.csv"):
        with pytest.raises(tree.RefusedPathError) as info:
            tree.confine(root, name)
        messages.add(str(info.value))
    assert messages == {tree.OUTSIDE}


def test_confine_accepts_a_file_inside_relative_to_the_mapping(tmp_path: Path) -> None:
    write(tmp_path / "data" / "rows.csv", "a\n1\n")
    path, rel = tree.confine(tmp_path, "../data/rows.csv", "maps")
    assert rel == "data/rows.csv" and path == tmp_path / "data" / "rows.csv"


def _true_depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((_true_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_true_depth(v) for v in value.values()), default=0)
    return 0


def _random_value(rng: random.Random, depth: int) -> object:
    roll = rng.random()
    if depth > 7 or roll < 0.3:
        return rng.choice(['a"[\\', "\\\\", "x{", '"', 1, None, '\\"]]', "é[", "}"])
    if roll < 0.65:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["k[", '"{', "\\", "z"]): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def test_json_depth_matches_the_parsed_depth() -> None:
    assert tree.json_depth(b"1") == 0
    assert tree.json_depth(b"[]") == 1
    assert tree.json_depth(b'{"a": [1]}') == 2
    assert tree.json_depth(b'"[[[["') == 0
    assert tree.json_depth(b'{"a\\"[": {}}') == 2
    rng = random.Random(7)
    for i in range(3000):
        value = _random_value(rng, 0)
        text = json.dumps(value, ensure_ascii=i % 2 == 0).encode()
        assert tree.json_depth(text) == _true_depth(value), text


def test_json_depth_of_a_very_deep_text_does_not_recurse() -> None:
    deep = b'{"x":' * 200_000 + b"1" + b"}" * 200_000
    assert tree.json_depth(deep) == 200_000
    assert tree.too_deep(deep, settings.Limits()) is not None
    assert tree.too_deep(b'{"x": [1]}', settings.Limits()) is None


def test_stale_leftovers_are_swept_and_fresh_ones_kept(tmp_path: Path) -> None:
    old_file = write(tmp_path / ".tmp-old", "x")
    old_dir = tmp_path / ".tmp-olddir"
    write(old_dir / "payload.pickle", "x")
    fresh = write(tmp_path / ".tmp-fresh", "x")
    keep = write(tmp_path / "run.json")
    past = time.time() - 2 * tree.STALE_AFTER_S
    for p in (old_file, old_dir):
        os.utime(p, (past, past))
    assert tree.sweep_stale(tmp_path) == 2
    assert not old_file.exists() and not old_dir.exists() and fresh.exists() and keep.exists()


def test_fingerprint_changes_with_a_file_and_ignores_hidden_ones(tmp_path: Path) -> None:
    write(tmp_path / "a.json")
    first = tree.fingerprint(tmp_path)
    write(tmp_path / ".tmp-x", "y")
    assert tree.fingerprint(tmp_path) == first
    write(tmp_path / "a.json", '{"changed": true}')
    assert tree.fingerprint(tmp_path) != first


def test_walk_matches_os_walk_for_plain_trees(tmp_path: Path) -> None:
    for rel in ("b.json", "a.csv", "A.jsonl", ".hidden.json", "notes.txt", "z/b.json", "z/a.json", "a/x.json",
                "a/.h/y.json", ".git/c.json", "dir.json/inner.json", "a/sub/deep.jsonl"):  # fmt: skip
        write(tmp_path / rel)
    (tmp_path / "linked").symlink_to(tmp_path / "z", target_is_directory=True)  # a link to a folder: not followed
    (tmp_path / "l.json").symlink_to(tmp_path / "b.json")  # a link inside the root: listed
    suffixes = (".json", ".jsonl", ".csv")
    expected = []
    for dirpath, dirnames, filenames in os.walk(tmp_path):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        expected += [
            (Path(dirpath) / n).relative_to(tmp_path).as_posix()
            for n in sorted(filenames)
            if n.endswith(suffixes) and not n.startswith(".")
        ]
    assert [e.rel for e in tree.walk(tmp_path, suffixes).files] == expected
    assert {e.rel: e.size for e in tree.walk(tmp_path, suffixes).files}["l.json"] == 2


def test_process_alive_tells_a_running_process_from_a_gone_one() -> None:
    assert tree.process_alive(os.getpid())
    assert not tree.process_alive(999_999_999)  # above any pid_max


def _bad_names(root: Path) -> None:
    """Names that are not UTF-8: a report, a note and a folder (os.scandir hands them on as lone surrogates)."""
    write(root / "good.json")
    (root / os.fsdecode(b"\xff-report.json")).write_bytes(b"{}")
    (root / os.fsdecode(b"caf\xe9.md")).write_bytes(b"x")
    (root / os.fsdecode(b"dir\xfe")).mkdir()
    (root / os.fsdecode(b"dir\xfe") / "a.json").write_bytes(b"{}")


def test_names_that_are_not_utf8_are_refused_and_shown_as_text(tmp_path: Path) -> None:
    _bad_names(tmp_path)
    listing = tree.walk(tmp_path, (".json",))
    assert [e.rel for e in listing.files] == ["good.json"]
    assert [(r.rel, r.reason) for r in listing.refused] == [
        ("dir\\xfe", "its name is not UTF-8 text"),
        ("\\xff-report.json", "its name is not UTF-8 text"),
    ]
    assert [r.rel for r in tree.walk(tmp_path).refused] == ["caf\\xe9.md", "dir\\xfe", "\\xff-report.json"]
    folder = tmp_path / os.fsdecode(b"dir\xfe")
    before = tree.fingerprint(tmp_path, folder)
    os.utime(folder / "a.json", ns=(0, 0))
    assert tree.fingerprint(tmp_path, folder) != before
