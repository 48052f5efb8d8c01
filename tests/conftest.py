"""Shared test fixtures: the public PMB data (read-only, never copied into the project) and a live app server."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

# The app imports its shared helpers as `pages.ui`; make the project root importable however pytest is started.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from docs.screenshot import CHROMIUM, CHROMIUM_ARGS, serve  # noqa: E402  (needs the project root on sys.path)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The read-only public data folder next to the project (../shared/data)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent; it holds the public benchmark data these tests read")
    return SHARED_DATA


@pytest.fixture(scope="session")
def shared_loads(shared_data: Path) -> tuple[Any, Any]:
    """``(PmbLoad, QaLoad)`` of the whole shared data, loaded once per session without the cache."""
    from memeval_core.results import load_all_results

    if not (shared_data / "precisionmembench").is_dir():
        pytest.skip(f"{shared_data} lacks the public PMB data")
    return load_all_results(shared_data, shared_data, cache_dir=None)


@pytest.fixture(scope="session")
def pmb_results(shared_data: Path) -> Path:
    """The public PrecisionMemBench tree: fixtures/ plus test-results/baseline/ (13 single-turn, 11 session)."""
    path = shared_data / "precisionmembench"
    if not (path / "fixtures").is_dir():
        pytest.skip(f"{path} is absent; it holds the public PrecisionMemBench fixtures and baseline reports")
    return path


@pytest.fixture
def pmb_env(pmb_results: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app reads the public PMB data (use with ``pytestmark = pytest.mark.usefixtures("pmb_env")``)."""
    monkeypatch.setenv("MEMEVAL_RESULTS", str(pmb_results))
    monkeypatch.delenv("MEMEVAL_FIXTURES", raising=False)
    return pmb_results


@pytest.fixture
def script_main_with_a_thread(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """This process as the Streamlit server is during a script run: ``__main__`` a script file, a second thread."""
    script = tmp_path_factory.mktemp("script") / "app.py"
    script.write_text("raise SystemExit(1)\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    yield
    stop.set()
    other.join()


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
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
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


def serve_app(results: Path, log_dir: Path, extra_env: dict[str, str] | None = None) -> Any:
    """Run ``streamlit run app.py`` on a free port over ``results`` (see :func:`docs.screenshot.serve`)."""
    return serve(results, log_dir / "server.log", extra_env)


@pytest.fixture(scope="session")
def streamlit_server(pmb_results: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of ``streamlit run app.py`` serving the public PMB data; stopped after the session."""
    with serve_app(pmb_results, tmp_path_factory.mktemp("streamlit")) as url:
        yield url
