"""Download the current PMB fixtures and baseline reports from upstream into the results directory.

Real HTTP against GitHub (the contents API lists ``test-results/baseline``; raw file URLs give the
bytes). ``--from DIR`` copies the same files from a local tree laid out like the upstream repo,
which is how it is tested offline. Every file is downloaded and checked first; only then does the
new folder replace the old one, so an interrupted sync leaves the previous data intact.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import requests

from memeval_core.pmb.fixtures import FIXTURE_FILES
from memeval_core.pmb.ingest import sniff

UPSTREAM_REPO = "tenurehq/precisionMemBench"
UPSTREAM_REF = "main"
BASELINE_DIR = "test-results/baseline"
TARGET = "precisionmembench"
API_ENV = "MEMEVAL_GITHUB_API"
RAW_ENV = "MEMEVAL_GITHUB_RAW"
TIMEOUT_S = 30


class SyncError(Exception):
    """A sync that could not complete; the results directory is unchanged."""


@dataclass(frozen=True)
class SyncResult:
    """What a sync wrote."""

    target: Path
    """Folder that now holds the data."""
    files: tuple[str, ...]
    """Files written, relative to target."""
    source: str
    """Where they came from (URL or local folder)."""


def _is_report_name(name: str) -> bool:
    return name.endswith(".json") and "retrieval-report" in name


def _fetch(url: str) -> bytes:
    try:
        resp = requests.get(url, timeout=TIMEOUT_S, headers={"User-Agent": "memeval-sync"})
    except requests.RequestException as exc:
        raise SyncError(
            f"cannot reach {url}: {type(exc).__name__}; check the network or use --from DIR with a local copy"
        ) from exc
    if resp.status_code != 200:
        raise SyncError(f"{url} answered HTTP {resp.status_code}; try again later or use --from DIR with a local copy")
    return resp.content


def plan_remote(repo: str = UPSTREAM_REPO, ref: str = UPSTREAM_REF) -> tuple[dict[str, str], str]:
    """Map of target-relative path -> URL for every file to download, and the source description."""
    api = os.environ.get(API_ENV, "https://api.github.com").rstrip("/")
    raw = os.environ.get(RAW_ENV, "https://raw.githubusercontent.com").rstrip("/")
    listing_url = f"{api}/repos/{repo}/contents/{BASELINE_DIR}?ref={ref}"
    try:
        listing = json.loads(_fetch(listing_url))
    except json.JSONDecodeError as exc:
        raise SyncError(f"{listing_url} did not return a JSON listing") from exc
    if not isinstance(listing, list):
        raise SyncError(f"{listing_url} did not return a list of files: {str(listing)[:120]}")
    plan = {f"fixtures/{n}": f"{raw}/{repo}/{ref}/fixtures/{n}" for n in FIXTURE_FILES}
    for item in listing:
        if isinstance(item, dict) and item.get("type") == "file" and _is_report_name(str(item.get("name", ""))):
            name = str(item["name"])
            plan[f"{BASELINE_DIR}/{name}"] = str(
                item.get("download_url") or f"{raw}/{repo}/{ref}/{BASELINE_DIR}/{name}"
            )
    return plan, f"https://github.com/{repo}/tree/{ref}"


def plan_local(source: Path) -> dict[str, Path]:
    """Map of target-relative path -> local file, from a tree laid out like upstream."""
    if not (source / "fixtures").is_dir():
        raise SyncError(f"{source} has no fixtures/ folder; point --from at a copy of the upstream repository")
    plan: dict[str, Path] = {}
    for n in FIXTURE_FILES:
        p = source / "fixtures" / n
        if not p.is_file():
            raise SyncError(f"{p} is missing")
        plan[f"fixtures/{n}"] = p
    base = source / BASELINE_DIR
    for p in sorted(base.glob("*.json")) if base.is_dir() else []:
        if _is_report_name(p.name):
            plan[f"{BASELINE_DIR}/{p.name}"] = p
    return plan


def _check(rel: str, data: bytes) -> None:
    try:
        parsed = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SyncError(f"{rel} is not valid JSON ({exc}); nothing was changed") from exc
    kind = sniff(parsed)
    if kind is None:
        raise SyncError(f"{rel} is not a PMB fixture or report; nothing was changed")


def _install(results: Path, files: dict[str, bytes], source: str) -> SyncResult:
    results.mkdir(parents=True, exist_ok=True)
    target = results / TARGET
    staging = Path(tempfile.mkdtemp(prefix=".sync-", dir=results))
    try:
        for rel, data in files.items():
            out = staging / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
        meta = {"source": source, "synced_at": datetime.now(UTC).isoformat(timespec="seconds"), "files": sorted(files)}
        (staging / "SOURCE.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        old = None
        if target.exists():
            old = results / f".old-{TARGET}-{os.getpid()}"
            target.rename(old)
        staging.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return SyncResult(target, tuple(sorted(files)), source)


def sync(results: Path, from_dir: Path | None = None, progress: Callable[[str], None] | None = None) -> SyncResult:
    """Fetch fixtures and baseline reports (from upstream, or ``from_dir``) into ``results/precisionmembench``."""
    say = progress or (lambda _msg: None)
    files: dict[str, bytes] = {}
    if from_dir is not None:
        for rel, path in plan_local(from_dir).items():
            files[rel] = path.read_bytes()
        source = str(from_dir)
    else:
        plan, source = plan_remote()
        for rel, url in plan.items():
            say(f"GET {url}")
            files[rel] = _fetch(url)
    for rel, data in files.items():
        _check(rel, data)
    if not any(rel.startswith(BASELINE_DIR) for rel in files):
        raise SyncError(f"no baseline reports found in {source}; nothing was changed")
    return _install(results, files, source)


def has_results(results: Path) -> bool:
    """True when the results directory holds at least one JSON file."""
    return results.is_dir() and any(p.suffix == ".json" for p in results.rglob("*.json"))
