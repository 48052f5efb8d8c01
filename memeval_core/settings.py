"""Every ``MEMEVAL_*`` environment variable, read in this one module, the same for the CLI and the app.

A value that cannot be read (``MEMEVAL_MAX_FILES=lots``) raises :class:`SettingsError` naming the variable;
nothing falls back silently to a default the user did not choose.

| variable | meaning | default |
|---|---|---|
| ``MEMEVAL_RESULTS`` | results directory, or a results dataset ``hf://datasets/OWNER/NAME[@REVISION]`` | ``results/`` |
| ``MEMEVAL_REFRESH_MINUTES`` | the app reads a results dataset again after this many minutes (and on "Refresh") | 15 |
| ``MEMEVAL_FIXTURES`` | PMB fixtures directory | found under the results |
| ``MEMEVAL_DATASETS`` | where ``locomo10.json`` lies | found under the results |
| ``MEMEVAL_READ_ONLY`` | ``1``: hosted mode (no Upload, no Publish) | off; forced on in an exported Space |
| ``MEMEVAL_ADMIN_TOKEN`` | unlocks the write pages of a read-only app for whoever types it | none |
| ``MEMEVAL_MAX_FILE_MB`` | largest result file read | 256 |
| ``MEMEVAL_MAX_TOTAL_MB`` | all result files together | 4096 |
| ``MEMEVAL_MAX_FILES`` | result files read | 50000 |
| ``MEMEVAL_MAX_JSON_DEPTH`` | deepest JSON nesting accepted | 64 |
| ``MEMEVAL_MAX_CSV_FIELD_KB`` | longest CSV cell | 1024 |
| ``MEMEVAL_MAX_UPLOAD_MB`` | largest uploaded file | 200 |
| ``MEMEVAL_UPLOAD_QUOTA_MB`` | all uploaded files together (``uploads/``) | 2048 |
| ``MEMEVAL_EXPORT_DIR`` | the last published export | ``hf_export/`` |
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memeval_core.hub_location import HubLocation, parse_location

PROJECT_ROOT = Path(__file__).resolve().parent.parent
"""The checkout (or the exported Space) this code runs from."""
DEFAULT_RESULTS = PROJECT_ROOT / "results"
RESULTS_ENV = "MEMEVAL_RESULTS"
FIXTURES_ENV = "MEMEVAL_FIXTURES"
DATASETS_ENV = "MEMEVAL_DATASETS"
READ_ONLY_ENV = "MEMEVAL_READ_ONLY"
ADMIN_TOKEN_ENV = "MEMEVAL_ADMIN_TOKEN"
EXPORT_DIR_ENV = "MEMEVAL_EXPORT_DIR"
SPACE_MARKER = "MEMEVAL_SPACE"
"""A file of this name beside ``app.py`` makes the app read-only whatever its environment (an export writes it)."""
MB = 1024 * 1024


class SettingsError(ValueError):
    """An environment variable holds a value memeval cannot use."""


@dataclass(frozen=True)
class Limits:
    """What one load or upload may cost; each limit is stated in the README and set by its variable."""

    max_file_bytes: int = 256 * MB
    """Largest result file read (``MEMEVAL_MAX_FILE_MB``); a larger one is refused with its size."""
    max_total_bytes: int = 4096 * MB
    """All result files of one directory together (``MEMEVAL_MAX_TOTAL_MB``); files past it are refused."""
    max_files: int = 50_000
    """Result files read from one directory (``MEMEVAL_MAX_FILES``); the rest are refused."""
    max_json_depth: int = 64
    """Deepest nesting of arrays and objects in a JSON file (``MEMEVAL_MAX_JSON_DEPTH``)."""
    max_csv_field_bytes: int = 1024 * 1024
    """Longest cell of a CSV file (``MEMEVAL_MAX_CSV_FIELD_KB``)."""
    max_upload_bytes: int = 200 * MB
    """Largest file one upload or ``add`` accepts (``MEMEVAL_MAX_UPLOAD_MB``)."""
    upload_quota_bytes: int = 2048 * MB
    """All files under the results directory's ``uploads/`` together (``MEMEVAL_UPLOAD_QUOTA_MB``)."""


def _number(env: Mapping[str, str], name: str, default: float, *, scale: int = 1) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return int(default)
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise SettingsError(f"{name}={raw!r} must be a positive number")
    return max(1, int(value * scale))


def limits(env: Mapping[str, str] | None = None) -> Limits:
    """The limits in force: each variable that is set, else its default."""
    env = os.environ if env is None else env
    d = Limits()
    return Limits(
        max_file_bytes=_number(env, "MEMEVAL_MAX_FILE_MB", d.max_file_bytes, scale=MB),
        max_total_bytes=_number(env, "MEMEVAL_MAX_TOTAL_MB", d.max_total_bytes, scale=MB),
        max_files=_number(env, "MEMEVAL_MAX_FILES", d.max_files),
        max_json_depth=_number(env, "MEMEVAL_MAX_JSON_DEPTH", d.max_json_depth),
        max_csv_field_bytes=_number(env, "MEMEVAL_MAX_CSV_FIELD_KB", d.max_csv_field_bytes, scale=1024),
        max_upload_bytes=_number(env, "MEMEVAL_MAX_UPLOAD_MB", d.max_upload_bytes, scale=MB),
        upload_quota_bytes=_number(env, "MEMEVAL_UPLOAD_QUOTA_MB", d.upload_quota_bytes, scale=MB),
    )


def results_dir(flag: str | os.PathLike[str] | None = None) -> Path:
    """The results directory: ``--results`` if given, else ``$MEMEVAL_RESULTS``, else ``results/``."""
    chosen = flag or os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS
    return Path(chosen).expanduser()


def results_root(flag: str | os.PathLike[str] | None = None) -> Path | HubLocation:
    """The results root: :func:`results_dir`, or a Hub dataset when the setting is ``hf://datasets/OWNER/NAME[@REV]``
    (``HubResultsError`` for any other ``hf://`` text)."""
    chosen = str(flag or os.environ.get(RESULTS_ENV) or "")
    hub = parse_location(chosen.strip())
    return hub if hub is not None else results_dir(flag)


def refresh_seconds(env: Mapping[str, str] | None = None) -> int:
    """How often the app reads a results dataset on the Hub again (``MEMEVAL_REFRESH_MINUTES``, default 15)."""
    return _number(os.environ if env is None else env, "MEMEVAL_REFRESH_MINUTES", 15 * 60, scale=60)


def fixtures_dir(flag: str | os.PathLike[str] | None = None) -> Path | None:
    """An explicit fixtures directory (``--fixtures`` or ``$MEMEVAL_FIXTURES``); None: find it under results."""
    chosen = flag or os.environ.get(FIXTURES_ENV)
    return Path(chosen).expanduser() if chosen else None


def datasets_dir(flag: str | os.PathLike[str] | None = None) -> Path | None:
    """An explicit datasets directory (``--datasets`` or ``$MEMEVAL_DATASETS``); None: look under results."""
    chosen = flag or os.environ.get(DATASETS_ENV, "").strip()
    return Path(chosen).expanduser() if chosen else None


def export_dir() -> Path:
    """Where the last export lives: ``$MEMEVAL_EXPORT_DIR``, else ``hf_export/``."""
    chosen = os.environ.get(EXPORT_DIR_ENV, "").strip()
    return Path(chosen).expanduser() if chosen else PROJECT_ROOT / "hf_export"


def is_space(project_root: Path = PROJECT_ROOT) -> bool:
    """True when this code runs from an exported Space (its marker file lies beside ``app.py``)."""
    return (project_root / SPACE_MARKER).is_file()


def read_only(env: Mapping[str, str] | None = None, project_root: Path = PROJECT_ROOT) -> bool:
    """Hosted mode: ``MEMEVAL_READ_ONLY`` is set to a true value, or this is an exported Space (always)."""
    env = os.environ if env is None else env
    flag = env.get(READ_ONLY_ENV, "").strip().lower() in ("1", "true", "yes", "on")
    return flag or is_space(project_root)


def admin_token(env: Mapping[str, str] | None = None) -> str | None:
    """The token that unlocks the write pages of a read-only app, when one is set (at least 16 characters)."""
    env = os.environ if env is None else env
    token = env.get(ADMIN_TOKEN_ENV, "").strip()
    if not token:
        return None
    if len(token) < 16:
        raise SettingsError(f"{ADMIN_TOKEN_ENV} must be at least 16 characters long")
    return token


WORKERS_ENV = "MEMEVAL_WORKERS"
CACHE_ENV = "MEMEVAL_CACHE_DIR"
MAX_WORKERS = 8
"""Upper bound of the default worker count; more processes only add start-up and transfer costs."""


def workers(env: Mapping[str, str] | None = None) -> int:
    """Processes a large load may use: ``MEMEVAL_WORKERS`` (1 = serial), else the CPU count, at most 8."""
    env = os.environ if env is None else env
    if not env.get(WORKERS_ENV, "").strip():
        return min(os.cpu_count() or 1, MAX_WORKERS)
    return _number(env, WORKERS_ENV, 1)


def cache_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """The warm-start cache: ``MEMEVAL_CACHE_DIR``, else ``$XDG_CACHE_HOME/memeval``, else ``~/.cache/memeval``.

    None when ``MEMEVAL_CACHE_DIR`` is ``off``, ``0``, ``false``, ``no`` or empty (caching disabled).
    """
    env = os.environ if env is None else env
    chosen = env.get(CACHE_ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "0", "off", "false", "no") else Path(chosen).expanduser()
    xdg = env.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "memeval"


GITHUB_API_ENV = "MEMEVAL_GITHUB_API"
GITHUB_RAW_ENV = "MEMEVAL_GITHUB_RAW"


def github_api(env: Mapping[str, str] | None = None) -> str:
    """Base URL of the GitHub API that ``sync`` lists upstream folders with (``MEMEVAL_GITHUB_API``)."""
    env = os.environ if env is None else env
    return env.get(GITHUB_API_ENV, "https://api.github.com").rstrip("/")


def github_raw(env: Mapping[str, str] | None = None) -> str:
    """Base URL that ``sync`` downloads upstream files from (``MEMEVAL_GITHUB_RAW``)."""
    env = os.environ if env is None else env
    return env.get(GITHUB_RAW_ENV, "https://raw.githubusercontent.com").rstrip("/")


HUB_ENDPOINT_ENV = "HF_ENDPOINT"
"""The Hugging Face Hub's own variable for its base URL, which ``huggingface_hub`` reads too."""


def hub_endpoint(env: Mapping[str, str] | None = None) -> str:
    """Base URL of the Hugging Face Hub (``HF_ENDPOINT``, read now, not at import), else the public Hub."""
    env = os.environ if env is None else env
    return (env.get(HUB_ENDPOINT_ENV) or "https://huggingface.co").rstrip("/")
