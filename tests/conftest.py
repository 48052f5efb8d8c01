"""Shared test fixtures: the public PMB data (read-only, never copied into the project) and a live app server."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SERVER_START_LIMIT_S = 90

# The app imports its shared helpers as `pages.ui`; make the project root importable however pytest is started.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The read-only public data folder next to the project (../shared/data)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent; it holds the public benchmark data these tests read")
    return SHARED_DATA


@pytest.fixture(scope="session")
def pmb_results(shared_data: Path) -> Path:
    """The public PrecisionMemBench tree: fixtures/ plus test-results/baseline/ (13 single-turn, 11 session)."""
    path = shared_data / "precisionmembench"
    if not (path / "fixtures").is_dir():
        pytest.skip(f"{path} is absent; it holds the public PrecisionMemBench fixtures and baseline reports")
    return path


def free_port() -> int:
    """A TCP port that was free a moment ago on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def pmb_env(pmb_results: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app reads the public PMB data (use with ``pytestmark = pytest.mark.usefixtures("pmb_env")``)."""
    monkeypatch.setenv("MEMEVAL_RESULTS", str(pmb_results))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)
    return pmb_results


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """Bytes handed to every download button in an AppTest run, by file name."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

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


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A local Hugging Face Hub stand-in, with HF_ENDPOINT, a temporary HF_HOME and HF_TOKEN pointing at it."""
    from huggingface_hub import constants

    from tests.hub_standin import HUB_TOKEN, HubStandIn

    home = tmp_path / "hf_home"
    with HubStandIn(HUB_TOKEN) as standin:
        monkeypatch.setenv("HF_ENDPOINT", standin.url)
        monkeypatch.setenv("HF_HOME", str(home))
        monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
        monkeypatch.setenv("HF_TOKEN", HUB_TOKEN)
        # huggingface_hub reads these at import time; the module is already imported here.
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)  # the stand-in speaks git LFS, not Xet
        monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
        monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
        yield standin


@pytest.fixture(scope="session")
def chromium() -> dict[str, Any]:
    """Playwright launch options for Debian's chromium, installed with apt when absent (tests run as root).

    Skips with the reason only when apt cannot install it.
    """
    if not CHROMIUM.exists():
        if shutil.which("apt-get") is None:
            pytest.skip(f"{CHROMIUM} is absent and apt-get is not available to install it")
        proc = subprocess.run(
            "apt-get update && apt-get install -y chromium",
            shell=True,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0 or not CHROMIUM.exists():
            pytest.skip(f"{CHROMIUM} is absent and `apt-get install -y chromium` failed: {proc.stderr.strip()[-500:]}")
    return {"executable_path": str(CHROMIUM), "args": list(CHROMIUM_ARGS)}


@contextmanager
def serve_app(results: Path, log_dir: Path, extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """Run ``streamlit run app.py`` on a free port over ``results``; yields its base URL, stops it after."""
    port = free_port()
    env = {**os.environ, "MEMEVAL_RESULTS": str(results), **(extra_env or {})}
    env.pop("MEMEVAL_FIXTURES", None)
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    log_path = log_dir / "server.log"
    # A log file rather than a pipe: an unread pipe would block the server once it fills.
    log = log_path.open("wb")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        # Startup wait only (not an assertion about speed): poll the health endpoint until it answers.
        deadline = time.monotonic() + SERVER_START_LIMIT_S
        while True:
            if proc.poll() is not None:
                out = log_path.read_text(errors="replace")
                raise RuntimeError(f"streamlit exited with code {proc.returncode}:\n{out}")
            try:
                if requests.get(f"{url}/_stcore/health", timeout=2).text.strip() == "ok":
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not answer on {url} within {SERVER_START_LIMIT_S} s")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="session")
def streamlit_server(pmb_results: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of ``streamlit run app.py`` serving the public PMB data; stopped after the session."""
    with serve_app(pmb_results, tmp_path_factory.mktemp("streamlit")) as url:
        yield url
