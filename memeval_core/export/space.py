"""The Hugging Face Space around an export: README with front matter, Dockerfile, requirements, app files.

The Space is a Docker Space (``sdk: docker``, ``app_port: 8501``) that runs the same Streamlit app
as the project, read-only, on the snapshot under ``data/snapshot``. Everything here is a pure
function of the leaderboard and the project files, so an export is byte-identical on re-run;
the README date comes from ``SOURCE_DATE_EPOCH`` when it is set (reproducible builds convention).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memeval_core import licences
from memeval_core.export.models import Leaderboard, PmbTable, QaTable

APP_PORT = 8501
"""Port the Streamlit server listens on inside the Space container."""
SNAPSHOT_DIR = "data/snapshot"
"""Where the snapshot (PMB and QA runs) lies inside an export (and inside the container under ``/app``)."""
DETAILS_DIR = "data/details"
"""Where the per-case / per-question Parquet files lie inside an export."""
TOP_ROWS = 10
"""Rows of each table the README summary shows."""
SHORT_DESCRIPTION_MAX = 60
"""The Hub refuses a ``short_description`` longer than this."""


@dataclass(frozen=True)
class SpaceOptions:
    """What the Space's front matter says about itself."""

    title: str = "memeval leaderboard"
    """Space title."""
    emoji: str = "🧠"
    """Space emoji."""
    color_from: str = "indigo"
    """Gradient start colour of the Space card."""
    color_to: str = "blue"
    """Gradient end colour of the Space card."""
    short_description: str = "Memory-system benchmarks, re-scored from raw results"
    """One line on the Space card (at most 60 characters)."""
    license: str | None = None
    """License id of the Space and the details dataset; None: the one licence all inputs share, else ``other``
    (see :func:`memeval_core.licences.card_licence`)."""
    tags: tuple[str, ...] = ("leaderboard", "memory", "llm", "benchmark", "precisionmembench")
    """Space tags; ``leaderboard`` first so the Space is listed among leaderboards."""

    def __post_init__(self) -> None:
        if len(self.short_description) > SHORT_DESCRIPTION_MAX:
            raise ValueError(f"short_description is longer than {SHORT_DESCRIPTION_MAX} characters")
        if "leaderboard" not in self.tags:
            raise ValueError("tags must include 'leaderboard'")


def export_date(environ: dict[str, str] | None = None) -> dt.date:
    """The date an export states: ``SOURCE_DATE_EPOCH`` (seconds since 1970, UTC) when set, else today (UTC)."""
    env = os.environ if environ is None else environ
    epoch = env.get("SOURCE_DATE_EPOCH")
    if epoch:
        try:
            return dt.datetime.fromtimestamp(int(epoch), tz=dt.UTC).date()
        except (ValueError, OverflowError) as exc:
            raise ValueError(f"SOURCE_DATE_EPOCH={epoch!r} is not a whole number of seconds") from exc
    return dt.datetime.now(tz=dt.UTC).date()


def md_code(text: str) -> str:
    """Report-derived text as an inert Markdown table cell: a code span (no emphasis, links, HTML or mentions).

    The fence is one backtick longer than the longest backtick run inside; ``|`` is escaped because
    GFM splits table cells on it even inside code spans; line breaks become spaces.
    """
    flat = " ".join(text.splitlines()).replace("|", "\\|")
    fence = "`" * (max(map(len, re.findall("`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def _num(value: float | None, decimals: int) -> str:
    return "–" if value is None else f"{value:.{decimals}f}"


def _markdown_table(head: list[str], rows: Iterable[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def _pmb_summary(table: PmbTable, top: int) -> list[str]:
    session = table.benchmark == "pmb-session"
    head = ["#", "system", "passed", "active", "precision", "recall", *(["drift"] if session else []), "p50 ms"]
    head.append("verified")
    body = []
    for r in table.rows[:top]:
        cells = [
            str(r.rank),
            md_code(r.display_name),
            f"{r.passed}/{r.cases}",
            str(r.pass_types.active_retrieval),
            _num(r.mean_precision, 4),
            _num(r.mean_recall, 4),
        ]
        if session:
            cells.append(_num(r.mean_drift, 4))
        cells.append(_num(r.latency_p50_ms, 2))
        n = len(r.mismatches)
        cells.append("✓" if r.verified else f"✗ {n} mismatch{'es' if n != 1 else ''}")
        body.append(cells)
    return _markdown_table(head, body)


def _qa_summary(table: QaTable, top: int) -> list[str]:
    head = ["rank", "system", "group", "accuracy", "questions", "judges", "publishable"]
    body = [
        [
            "–" if r.rank is None else str(r.rank),
            md_code(r.display_name),
            md_code(r.rank_group),
            _num(r.accuracy, 4),
            str(r.n_questions),
            str(r.n_judges),
            "yes" if r.publishable else f"no ({len(r.not_publishable_because)} reasons)",
        ]
        for r in table.rows[:top]
    ]
    return _markdown_table(head, body)


def card_licence(board: Leaderboard, options: SpaceOptions) -> str:
    """The ``license:`` of the cards: as the options say, else derived from the inputs' licences."""
    return options.license or licences.card_licence({f.license for f in board.inputs})


def licence_section(board: Leaderboard) -> list[str]:
    """Markdown: the licence of every input file, grouped, and which text the details leave out."""
    by_licence: dict[str, list[str]] = {}
    for f in board.inputs:
        by_licence.setdefault(f.license, []).append(f.path)
    lines = ["## Licences", "", "Each input keeps its own licence; the numbers derived here follow them.", ""]
    lines += _markdown_table(
        ["licence", "files", "examples"],
        [
            [md_code(lic), str(len(paths)), ", ".join(md_code(p) for p in paths[:3]) + (" …" if len(paths) > 3 else "")]
            for lic, paths in sorted(by_licence.items())
        ],
    )
    if board.text_withheld:
        lines += ["", "Question, gold-answer and answer text is left out of the details of:"]
        lines += [f"- {md_code(b)} ({', '.join(found)})" for b, found in board.text_withheld.items()]
        lines.append("Export with `--include-text` to include it where its licence allows your use.")
    lines.append("")
    return lines


def _front_matter(options: SpaceOptions, licence: str) -> list[str]:
    # Strings as JSON literals: valid YAML scalars whatever characters they hold.
    def q(s: str) -> str:
        return json.dumps(s, ensure_ascii=False)

    return [
        "---",
        f"title: {q(options.title)}",
        f"emoji: {q(options.emoji)}",
        f"colorFrom: {options.color_from}",
        f"colorTo: {options.color_to}",
        "sdk: docker",
        f"app_port: {APP_PORT}",
        f"short_description: {q(options.short_description)}",
        f"license: {licence}",
        "tags:",
        *(f"  - {q(t)}" for t in options.tags),
        "pinned: false",
        "---",
    ]


def _origin_line(origin: str | None) -> list[str]:
    """The README line naming the results dataset (and commit) an export's runs were read from; none for a folder."""
    if origin is None:
        return []
    dataset, _, commit = origin.rpartition("@")
    return [f"- Results: read from the dataset `{dataset}` at commit `{commit}`"]


def _reproduce(origin: str | None) -> list[str]:
    """How to export the same inputs again: from the same dataset commit, or from the files ``inputs`` lists."""
    if origin is None:
        where = [
            "Put the input files listed under `inputs` in `leaderboard.json` (same relative paths, same SHA-256)",
            "into a results directory, then, in a memeval checkout at the same scoring version:",
        ]
        command = "python -m memeval_core export --results RESULTS_DIR --out hf_export/"
    else:
        where = [
            "Export the same commit of the results dataset (its part files are the `inputs` in `leaderboard.json`)",
            "in a memeval checkout at the same scoring version:",
        ]
        command = f"python -m memeval_core export --results {origin} --out hf_export/"
    return [*where, "", "```sh", command, "```"]


_TITLES = {"pmb-single-turn": "PrecisionMemBench, single-turn", "pmb-session": "PrecisionMemBench, session"}


def readme(
    board: Leaderboard, options: SpaceOptions, date: dt.date, top: int = TOP_ROWS, *, origin: str | None = None
) -> str:
    """The Space README: front matter, then the top of every table, the date, the fingerprint, how to reproduce.

    ``origin``: the results dataset and commit the runs were read from (``hf://datasets/OWNER/NAME@COMMIT``), which
    the README names and reproduces from; None for runs read from a local folder.
    """
    lines = [*_front_matter(options, card_licence(board, options)), "", f"# {options.title}", ""]
    lines += [
        "Every number below is re-derived by memeval from the raw per-case results",
        "of each run; a run is *verified* when everything its report states matches the re-derived value.",
        "The app in this Space shows the full tables, per-case details and verification.",
        "",
        f"- Exported: {date.isoformat()}",
        *_origin_line(origin),
        f"- Input fingerprint: `{board.fingerprint}`",
        f"- memeval {board.memeval_version}, scoring {board.scoring_version}, "
        f"leaderboard.json schema {board.schema_version}",
        f"- Rounding: {board.rounding.rule}, ratios to {board.rounding.ratio_decimals} decimals, "
        f"milliseconds to {board.rounding.ms_decimals}",
        "",
    ]
    for table in board.tables:
        title = _TITLES.get(table.benchmark, table.benchmark)
        shown = min(top, len(table.rows))
        lines += [f"## {md_code(title) if isinstance(table, QaTable) else title}", ""]
        lines.append(f"Top {shown:,} of {len(table.rows):,} runs.")
        lines.append("")
        lines += _pmb_summary(table, top) if isinstance(table, PmbTable) else _qa_summary(table, top)
        lines.append("")
    lines += [
        "## Files",
        "",
        "- `leaderboard.json`: every table, the inputs (path and SHA-256) and the fingerprint; its JSON Schema is",
        "  `docs/leaderboard.schema.json` in memeval.",
        f"- `{DETAILS_DIR}/<benchmark>.parquet`: one row per case (PMB) or question (QA), with `run_id` and",
        "  `display_name`; the folder's own card makes it a dataset with one config per benchmark",
        f'  (`datasets.load_dataset("{DETAILS_DIR}", "<benchmark>")`).',
        f"- `{SNAPSHOT_DIR}/`: what the app reads (PMB fixture, runs and re-derived cases; QA runs in memeval's"
        " run format), no raw reports needed.",
        "",
        *licence_section(board),
        "## Reproduce",
        "",
        *_reproduce(origin),
        "",
        "The new `leaderboard.json` carries the same fingerprint and is byte-identical; with",
        f"`SOURCE_DATE_EPOCH` set to midnight UTC of {date.isoformat()} this README is too.",
        "Run the Space locally with `MEMEVAL_RESULTS=hf_export/data/snapshot streamlit run hf_export/app.py`,",
        f"or `docker build -t memeval-space hf_export && docker run -p {APP_PORT}:{APP_PORT} memeval-space`.",
        "",
    ]
    return "\n".join(lines)


def dockerfile() -> str:
    """The Space's Dockerfile: python:3.11-slim, pinned requirements, the app, read-only on the snapshot."""
    return f"""FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \\
    PYTHONUNBUFFERED=1 \\
    PIP_NO_CACHE_DIR=1 \\
    PIP_DISABLE_PIP_VERSION_CHECK=1 \\
    MEMEVAL_RESULTS=/app/{SNAPSHOT_DIR} \\
    MEMEVAL_READ_ONLY=1

# Spaces run containers as user 1000.
RUN useradd --create-home --uid 1000 user
WORKDIR /app
COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt
COPY --chown=user . .
USER user

EXPOSE {APP_PORT}
CMD ["streamlit", "run", "app.py", "--server.port", "{APP_PORT}", "--server.address", "0.0.0.0", \\
     "--server.headless", "true", "--browser.gatherUsageStats", "false"]
"""


def requirements(project_root: Path) -> str:
    """The Space's own requirements: the runtime pins of the project's ``requirements.txt``, nothing else."""
    src = project_root / "requirements.txt"
    try:
        text = src.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"requirements.txt: cannot be read ({exc.strerror})") from exc
    pins = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-") or "==" not in line:
            raise ValueError(f"requirements.txt: {line!r} is not an exact pin (name==version)")
        pins.append(line)
    return "# Runtime pins of the memeval app (copied from memeval's requirements.txt).\n" + "\n".join(pins) + "\n"


def app_files(project_root: Path) -> list[str]:
    """The app's files, relative POSIX paths, sorted: ``app.py``, ``pages/*.py``, ``memeval_core/**/*.py`` and
    the data files it ships (``memeval_core/**/*.json``: the upstream catalogue, the judge prompts), and
    ``.streamlit/config.toml``. Caches, tests and everything else stay out."""
    out = ["app.py"]
    out += [p.relative_to(project_root).as_posix() for p in (project_root / "pages").glob("*.py")]
    out += [
        p.relative_to(project_root).as_posix()
        for pattern in ("*.py", "*.json")  # the code and the data it ships (the catalogue, the judge prompts)
        for p in (project_root / "memeval_core").rglob(pattern)
        if "__pycache__" not in p.parts and not any(part.startswith(".") for part in p.parts)
    ]
    if (project_root / ".streamlit" / "config.toml").is_file():
        out.append(".streamlit/config.toml")
    missing = [f for f in out if not (project_root / f).is_file()]
    if missing:
        raise ValueError(f"{missing[0]}: app file is missing from {project_root.name}/")
    return sorted(out)


def dataset_card(
    board: Leaderboard, space: str | None, options: SpaceOptions, data_dir: str = "data", *, origin: str | None = None
) -> str:
    """README of the details dataset: one config per benchmark over ``<data_dir>/<benchmark>.parquet``.

    ``data_dir`` is where the Parquet files lie relative to the card: ``data`` in the dataset repo, empty in an
    export's :data:`DETAILS_DIR` (its own card, so ``datasets.load_dataset(<that folder>, <benchmark>)`` works).
    ``origin``: as for :func:`readme`.
    """
    benchmarks = [t.benchmark for t in board.tables]
    licence = card_licence(board, options)
    lines = ["---", f"license: {licence}", "tags:", *(f"  - {json.dumps(t)}" for t in options.tags)]
    lines.append("configs:")
    for b in benchmarks:
        path = f"{data_dir}/{b}.parquet" if data_dir else f"{b}.parquet"
        lines += [f"  - config_name: {json.dumps(b)}", f"    data_files: {json.dumps(path)}"]
    lines += ["---", "", f"# {options.title}: details", ""]
    lines += [
        "One row per case (PrecisionMemBench) or question (QA benchmarks) of every run on the leaderboard,",
        "each with its `run_id` and `display_name`; `leaderboard.json` holds the run-level rows.",
        "",
        *_origin_line(origin),
        f"- Input fingerprint: `{board.fingerprint}`",
        f"- memeval {board.memeval_version}, scoring {board.scoring_version}",
    ]
    if space:
        lines.append(f"- Leaderboard Space: `{space}`")
    lines += ["", *licence_section(board)]
    return "\n".join(lines)
