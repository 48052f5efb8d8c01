"""Everything about one run, for the run page: headline, categories, failures, verification, provenance.

A run is found by its run id or its display name (:func:`find`), among PMB and QA runs alike. The view's
tables carry machine keys (headers come from :mod:`memeval_core.labels`). A run whose file(s) memeval's
catalogue lists (same SHA-256) names its upstream repository, commit, path and licence
(:func:`memeval_core.catalogue.upstream_of`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa

from memeval_core import labels, leaderboard
from memeval_core.catalogue import CatalogueError, Upstream, upstream_of
from memeval_core.explore.categories import category_table
from memeval_core.explore.home import INTERVAL_METHOD, wilson
from memeval_core.pmb.fixtures import PmbFixture
from memeval_core.pmb.run import PmbRun, RunIdentity
from memeval_core.pmb.runs_table import runs_table
from memeval_core.qa import leaderboard as qa_leaderboard
from memeval_core.qa.ingest import QaRunHeader


@dataclass(frozen=True)
class RunView:
    """One run as the run page shows it."""

    run_id: str
    """Stable run id."""
    name: str
    """Display name."""
    benchmark: str
    """Benchmark id."""
    score_name: str
    """"Pass rate" or "Accuracy"."""
    score: float | None
    """The main score in [0, 1]."""
    interval: tuple[float, float] | None
    """Its 95% interval (:data:`memeval_core.explore.home.INTERVAL_METHOD`)."""
    items: int
    """Cases or questions behind the score."""
    rank: int | None
    """Rank within its benchmark (QA: within its rank group)."""
    of: int
    """Runs ranked with it."""
    status: str
    """✓ verified / ✗ mismatches (PMB) or ✓ publishable / diagnostic (QA)."""
    problems: tuple[str, ...]
    """Verification mismatches (PMB) or failed protocol conditions (QA)."""
    summary: pd.DataFrame
    """One row of the run's headline numbers (machine keys)."""
    categories: pd.DataFrame
    """Per category: cases or questions, score."""
    failures: pd.DataFrame
    """PMB: every failed case with its failure messages. QA: failure reasons with counts."""
    provenance: tuple[tuple[str, str], ...]
    """(what, value) pairs: source file, SHA-256, upstream repository, commit, path and licence, format, models, ..."""
    upstream: tuple[Upstream, ...] = ()
    """The run's file(s) in memeval's catalogue (for links); empty when they are not catalogued."""


def upstream_provenance(source: str | None, sha256: str | None) -> tuple[tuple[Upstream, ...], list[tuple[str, str]]]:
    """The catalogue entries of a run's file(s), and the provenance rows that name them."""
    try:
        found = upstream_of(source, sha256)
    except CatalogueError:  # its message names a server path; the page says where to look instead
        return (), [
            ("Upstream", "memeval's catalogue could not be read; `python -m memeval_core sync --list` says why")
        ]
    if not found:
        return (), [("Upstream", "not in memeval's catalogue (a local or uploaded file)")]
    entries = [u.entry for u in found]
    first = entries[0]
    note = f" ({first.licence_note})" if first.licence_note else ""
    return found, [
        ("Upstream repository", " + ".join(dict.fromkeys(e.repository_url for e in entries))),
        ("Upstream commit", " + ".join(dict.fromkeys(e.commit for e in entries))),
        ("Upstream path", " + ".join(e.path for e in entries)),
        ("Upstream file", " + ".join(e.file_url for e in entries)),
        ("Licence", " + ".join(dict.fromkeys(e.licence for e in entries)) + note),
    ]


def find(pmb: Sequence[RunIdentity], qa: Sequence[QaRunHeader], wanted: str) -> RunIdentity | QaRunHeader | None:
    """The run whose run id is ``wanted``, else the first (PMB before QA) whose display name is ``wanted``."""
    for r in pmb:
        if r.run_id == wanted:
            return r
    for q in qa:
        if q.run_id == wanted:
            return q
    by_name: list[RunIdentity | QaRunHeader] = [r for r in pmb if r.display_name == wanted]
    by_name += [q for q in qa if q.display_name == wanted]
    return by_name[0] if by_name else None


def ranked(pmb: pa.Table, qa: Sequence[QaRunHeader]) -> list[str]:
    """Every run's id in leaderboard order: PMB suites by rank (from the runs table), then QA runs by benchmark
    and rank."""
    out = [r["run_id"] for r in leaderboard.table_rows(pmb)]
    qa_ids = {q.run_id for q in qa}
    rows = qa_leaderboard.rows(list(qa))
    rows.sort(key=lambda r: (r["benchmark"], r["rank_group"], r["rank"] or 10**9, r["display_name"]))
    return out + [r["run_id"] for r in rows if r["run_id"] in qa_ids]


def pmb_view(run: PmbRun, runs: pa.Table, fixture: PmbFixture | None) -> RunView:
    """The view of a PMB run, ranked among the runs of its suite (``runs``: the runs table)."""
    ident = run.identity
    rows = leaderboard.table_rows(runs, ident.benchmark)
    mine = next(r for r in rows if r["run_id"] == ident.run_id)
    # Identity is in the page's title and caption; drift only means something for session runs.
    left_out = {"mismatches", "run_id", "display_name", "benchmark", "verified"}
    if ident.benchmark != "pmb-session":
        left_out.add("mean_drift")
    summary = pd.DataFrame([{k: v for k, v in leaderboard.flat(mine).items() if k not in left_out}])
    cats = category_table(runs_table([run]), fixture) if fixture is not None else pd.DataFrame()
    if not cats.empty:
        cats = cats[["category", "cases", "passed", "pass_rate", "mean_precision", "mean_recall"]]
    failed = [c for c in run.table.cases() if not c.passed]
    failures = pd.DataFrame(
        [
            {
                "case_id": c.case_id,
                "turn_index": c.turn_index,
                "category": c.category,
                "failure": "; ".join(c.failures),
                "from_report": bool(c.taken_from_report),
            }
            for c in failed
        ],
        columns=["case_id", "turn_index", "category", "failure", "from_report"],
    )
    if ident.benchmark != "pmb-session":
        failures = failures.drop(columns="turn_index")
    cases = run.aggregate.cases
    upstream, upstream_rows = upstream_provenance(ident.source, ident.sha256)
    return RunView(
        run_id=ident.run_id,
        name=ident.display_name,
        benchmark=ident.benchmark,
        score_name="Pass rate",
        score=run.aggregate.passed / cases if cases else None,
        interval=wilson(run.aggregate.passed, cases),
        items=cases,
        rank=1 + [r["run_id"] for r in rows].index(ident.run_id),
        of=len(rows),
        status="✓ verified" if run.verified else f"✗ {len(run.mismatches)} mismatches",
        problems=tuple(run.mismatches),
        summary=summary,
        categories=cats,
        failures=failures,
        provenance=(
            ("Source file", ident.source),
            ("SHA-256", ident.sha256),
            *upstream_rows,
            ("Provider", ident.provider),
            *((f"Report provenance: {k}", v) for k, v in run.provenance),
            ("Run id", ident.run_id),
            ("Interval", INTERVAL_METHOD),
        ),
        upstream=upstream,
    )


def qa_view(run: QaRunHeader, runs: Sequence[QaRunHeader]) -> RunView:
    """The view of a QA run, ranked among ``runs`` of its rank group."""
    rows = qa_leaderboard.rows(list(runs), run.meta.benchmark)
    mine = next(r for r in rows if r["run_id"] == run.run_id)
    group = [r for r in rows if r["rank_group"] == mine["rank_group"] and r["accuracy"] is not None]
    acc, n = mine["accuracy"], mine["n_questions"]
    keys = (
        "accuracy",
        "majority_accuracy",
        "n_questions",
        "failures",
        "n_judges",
        "latency_p50_ms",
        "latency_p95_ms",
        "accuracy_without_disputed",
        "top_k",
    )
    summary = pd.DataFrame([{k: mine[k] for k in keys}])
    cats = pd.DataFrame(
        [
            {"code": code, "category": c["name"] or code, "count": c["n"], "accuracy": c["accuracy"]}
            for code, c in mine["categories"].items()
        ],
        columns=["code", "category", "count", "accuracy"],
    )
    reasons = run.score.failure_reasons
    failures = pd.DataFrame(
        [{"failure": reason, "count": count} for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1])],
        columns=["failure", "count"],
    )
    meta = run.meta
    upstream, upstream_rows = upstream_provenance(meta.source_file, meta.source_sha256)
    return RunView(
        run_id=run.run_id,
        name=run.display_name,
        benchmark=meta.benchmark,
        score_name="Accuracy",
        score=acc,
        interval=wilson(acc * n, n) if acc is not None else None,
        items=n,
        rank=mine["rank"],
        of=len(group),
        status="✓ publishable" if mine["publishable"] else "diagnostic",
        problems=tuple(mine["not_publishable_because"]),
        summary=summary,
        categories=cats,
        failures=failures,
        provenance=(
            ("Source file", mine["source"]),
            ("SHA-256", meta.source_sha256 or labels.MISSING),
            *upstream_rows,
            ("Format", meta.format or labels.MISSING),
            ("Answer model", meta.answer_model or labels.MISSING),
            ("Judge models", ", ".join(meta.judge_models) or labels.MISSING),
            ("Judges", ", ".join(f"{j}: {labels.rate(a)}" for j, a in mine["judges"].items()) or labels.MISSING),
            ("Joined to LoCoMo", mine["joined"] or labels.MISSING),
            ("Run id", run.run_id),
            ("Interval", INTERVAL_METHOD),
        ),
        upstream=upstream,
    )
