"""Which engine runs the columnar core's group-bys (issue 19): pyarrow, pandas, DuckDB and polars side by side.

Synthetic tables with a fixed seed, in the shapes of docs/TABLES.md: the PMB case table (10,000 single-turn
runs x 77 cases, the 13 categories of the PMB fixture in its proportions, pass rate ~0.5, ~10% null
precision) and the QA question table (1,000 LoCoMo runs x 1,540 questions, LoCoMo's categories 1-4, three
binary judges as ``verdicts`` list<struct> and ``per_judge`` map, ~2% failures, and in odd runs category 3
outside the declared protocol, ``scored`` false). Run ids are strings (``run-00042``) and each run's rows
stand together, as in the snapshot files, which are written the way the snapshot writers write them (zstd,
no statistics, default row groups).

Timed for each engine installed, best of 3, starting from the in-memory Arrow table a load holds (pandas
and polars time includes building their frame from the Arrow columns they need; that step is also timed
alone as ``to frame``):

- ``pmb leaderboard``: per run, cases, pass rate, mean precision (nulls skipped), mean recall, p50 and p95
  latency by nearest rank (``sorted[ceil(p * n) - 1]``, :mod:`memeval_core.latency`);
- ``qa leaderboard``: per run, over scored questions, their number, accuracy (mean score) and correct count;
- ``pmb categories`` / ``qa categories``: per run and category, pass rate / accuracy (scored questions);
- ``pmb read`` / ``qa read``: what one page needs from the Parquet file, 3 columns of the rows of 2 runs. A
  fresh interpreter per repeat reads twice: ``cold s`` is the first read, ``seconds`` the second (a page's
  re-run in a running app). Also on a copy of each file with row-group statistics and 64Ki-row groups
  (``stats`` layout), which lets a reader skip the other runs' row groups; and with pyarrow reading
  ``run_id`` as a dictionary column.

MiB: for an aggregation, the peak RSS one run of it adds above the RSS before it, in a fresh interpreter
holding the task's Arrow columns (after a warm-up on 1,000 rows; the peak reset through
/proc/self/clear_refs); for a read, the peak above the interpreter with the engine imported (the whole
process's peak is in the JSON).

Every engine's results must equal pyarrow's (counts exactly, means to 1e-12, percentiles exactly), and
pyarrow's percentiles of three runs :func:`memeval_core.latency.nearest_rank`; the script stops with the
differences if not. DuckDB and polars are not project dependencies: an engine that is not installed is
reported as such.

    python -m bench.bench_engine [--quick]
"""

from __future__ import annotations

import importlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench.common import parse_args, report, run_python, timed
from memeval_core.latency import nearest_rank

SEED = 20260119
ENGINES = ("pyarrow", "pandas", "duckdb", "polars")
PMB_CATEGORIES = {  # the PMB retrieval fixture's categories and their case counts (77 cases)
    "Alias resolution": 23,
    "Scope disambiguation": 12,
    "Fuzzy matching and prefix guards": 7,
    "Type routing and open questions": 6,
    "Design boundary cases": 6,
    "Budget eviction and capacity": 5,
    "Persona prelude content": 4,
    "Relation expansion": 4,
    "Supersession chain exclusion": 3,
    "Ranking stability": 3,
    "Counter-signal retrieval": 2,
    "Cross-user isolation": 1,
    "Cold start behavior": 1,
}
# LoCoMo's categories 1-4 (category 5, adversarial, is left out of most runs): 1,540 questions
QA_CATEGORIES = {"1": ("multi-hop", 282), "2": ("temporal", 321), "3": ("open-domain", 96),
                 "4": ("single-hop", 841)}  # fmt: skip
PASS_TYPES = ["active-retrieval", "structural", "trivially-empty"]
JUDGES = ("gpt-4o-mini", "claude-haiku", "llama-70b")
PMB_COLUMNS = ("run_id", "passed", "precision", "recall", "latency_ms")
QA_COLUMNS = ("run_id", "scored", "score", "correct")
READ_COLUMNS = {"pmb": ["case_id", "passed", "latency_ms"], "qa": ["question_id", "category", "score"]}
READ_SUM = {"pmb": "latency_ms", "qa": "score"}
COUNTS = {"n", "n_scored", "correct", "passed"}
KEYS = ("run_id", "category")


# --------------------------------------------------------------------------------------------- synthetic data


def _strings(values: list[str], codes: np.ndarray) -> pa.Array:
    return pa.array(values, pa.string()).take(pa.array(codes))


def _lists(pool: list[str], lengths: np.ndarray, rng: np.random.Generator) -> pa.Array:
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.ListArray.from_arrays(offsets, _strings(pool, rng.integers(0, len(pool), int(offsets[-1]))))


def pmb_table(runs: int, seed: int = SEED) -> pa.Table:
    """The PMB case table of ``runs`` single-turn runs of the 77 fixture cases (a subset of its columns)."""
    rng = np.random.default_rng(seed)
    cats = np.repeat(np.arange(len(PMB_CATEGORIES)), list(PMB_CATEGORIES.values()))
    cases = len(cats)
    n = runs * cases
    run = np.repeat(np.arange(runs), cases)
    skill = rng.uniform(0.3, 0.7, runs)[run]
    difficulty = np.tile(rng.normal(0, 0.15, cases), runs)
    passed = rng.random(n) < np.clip(skill - difficulty, 0.02, 0.98)
    returned = rng.integers(0, 6, n)
    precision = np.where(passed, 1.0, rng.integers(0, 4, n) / np.maximum(returned, 4))
    latency = np.round(rng.lognormal(np.log(120), 0.8, n), 2)
    ids = [f"pmb-{i:03d}" for i in range(cases)]
    beliefs = [f"belief-{i:04d}" for i in range(500)]
    return pa.table(
        {
            "run_id": _strings([f"run-{i:05d}" for i in range(runs)], run),
            "case_id": _strings(ids, np.tile(np.arange(cases), runs)),
            "turn_index": pa.nulls(n, pa.int64()),
            "category": _strings(list(PMB_CATEGORIES), np.tile(cats, runs)),
            "description": _strings(
                [f"Case {i}: the user asks about {b}" for i, b in enumerate(beliefs)], np.tile(np.arange(cases), runs)
            ),
            "relevant": _lists(beliefs, returned, rng),
            "passed": passed,
            "pass_type": pc.if_else(pa.array(passed), _strings(PASS_TYPES, rng.choice(3, n, p=[0.7, 0.2, 0.1])), None),
            "precision": pa.array(precision, mask=rng.random(n) < 0.1),
            "recall": np.where(passed, 1.0, rng.integers(0, 5, n) / 4),
            "latency_ms": latency,
            "failures": _lists(["must include x", "must not include y", "wrong order"], np.where(passed, 0, 1), rng),
        }
    )


def qa_table(runs: int, seed: int = SEED) -> pa.Table:
    """The QA question table of ``runs`` LoCoMo runs of 1,540 questions (a subset of its columns)."""
    rng = np.random.default_rng(seed + 1)
    codes = list(QA_CATEGORIES)
    cats = rng.permutation(np.repeat(np.arange(len(codes)), [c for _, c in QA_CATEGORIES.values()]))
    qs = len(cats)
    n = runs * qs
    run = np.repeat(np.arange(runs), qs)
    cat = np.tile(cats, runs)
    skill = rng.uniform(0.4, 0.8, runs)[run]
    votes = rng.random((n, len(JUDGES))) < np.clip(skill - np.tile(rng.normal(0, 0.15, qs), runs), 0.02, 0.98)[:, None]
    failed = rng.random(n) < 0.02
    votes[failed] = False
    score = votes.mean(axis=1)
    scored = ~((cat == codes.index("3")) & (run % 2 == 1))  # odd runs leave category 3 out of their protocol
    k = len(JUDGES)
    offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
    judge = _strings(list(JUDGES), np.tile(np.arange(k), n))
    verdicts = pa.StructArray.from_arrays(
        [judge, votes.ravel().astype(float), _strings(["binary"], np.zeros(n * k, int)),
         _strings(["gpt-4o-mini-2024-07-18"], np.zeros(n * k, int)),
         _strings(["WRONG", "CORRECT"], votes.ravel().astype(int)), pa.nulls(n * k, pa.string())],
        names=["judge", "score", "scale", "model", "label", "extra"],
    )  # fmt: skip
    conv = np.tile(np.searchsorted(np.linspace(0, qs, 11)[1:-1], np.arange(qs), side="right"), runs)
    return pa.table(
        {
            "run_id": _strings([f"run-{i:05d}" for i in range(runs)], run),
            "benchmark": _strings(["locomo"], np.zeros(n, int)),
            "question_id": _strings([f"conv-{c}-q{i}" for i, c in enumerate(conv[:qs])], np.tile(np.arange(qs), runs)),
            "question": _strings(
                [f"What did speaker {i % 7} say about topic {i}?" for i in range(qs)], np.tile(np.arange(qs), runs)
            ),
            "conversation": _strings([f"conv-{c}" for c in range(10)], conv),
            "category": _strings(codes, cat),
            "category_name": _strings([name for name, _ in QA_CATEGORIES.values()], cat),
            "answer": pc.if_else(
                pa.array(failed), None, _strings([f"answer {i}" for i in range(5000)], rng.integers(0, 5000, n))
            ),
            "verdicts": pa.ListArray.from_arrays(offsets, verdicts),
            "latency_ms": np.round(rng.lognormal(np.log(1500), 0.5, n), 1),
            "error": np.zeros(n, bool),
            "scored": scored,
            "failure": pc.if_else(pa.array(failed), "no answer", pa.scalar(None, pa.string())),
            "score": score,
            "correct": score >= 0.6,
            "per_judge": pa.MapArray.from_arrays(offsets, judge, pa.array(votes.ravel().astype(float))),
        }
    )


# ------------------------------------------------------------------------------------------------- engines


def optional(name: str) -> Any:
    """The module ``name``, or None when it is not installed (DuckDB and polars are not project dependencies)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def rank_index(n: np.ndarray, p: float) -> np.ndarray:
    """0-based nearest-rank position of the p-th percentile in ``n`` sorted values: ``max(ceil(p * n) - 1, 0)``."""
    return np.maximum(np.ceil(p * n).astype(np.int64) - 1, 0)


def _pa_pmb_leaderboard(t: pa.Table) -> pa.Table:
    t = t.select(PMB_COLUMNS)
    g = t.group_by("run_id").aggregate(
        [([], "count_all"), ("passed", "sum"), ("passed", "mean"), ("precision", "mean"), ("recall", "mean")]
    )
    # group_by's output order is not the input's (not even with use_threads=False in pyarrow 26): sort both by
    # run id, so that the groups line up with the runs' blocks of latencies sorted within each run
    g = g.sort_by("run_id")
    lat = t.select(["run_id", "latency_ms"]).sort_by([("run_id", "ascending"), ("latency_ms", "ascending")])
    lat = lat["latency_ms"]
    n = g["count_all"].to_numpy()
    start = np.cumsum(n) - n
    return pa.table(
        {
            "run_id": g["run_id"],
            "n": n,
            "passed": g["passed_sum"],
            "pass_rate": g["passed_mean"],
            "mean_precision": g["precision_mean"],
            "mean_recall": g["recall_mean"],
            "p50_ms": lat.take(start + rank_index(n, 0.5)),
            "p95_ms": lat.take(start + rank_index(n, 0.95)),
        }
    )


def _pa_qa_leaderboard(t: pa.Table) -> pa.Table:
    s = t.select(QA_COLUMNS).filter(pc.field("scored"))
    g = s.group_by("run_id").aggregate([([], "count_all"), ("score", "mean"), ("correct", "sum")])
    return g.rename_columns({"count_all": "n_scored", "score_mean": "accuracy", "correct_sum": "correct"})


def _pa_pmb_categories(t: pa.Table) -> pa.Table:
    g = t.select(["run_id", "category", "passed"]).group_by(["run_id", "category"])
    out = g.aggregate([([], "count_all"), ("passed", "mean")])
    return out.rename_columns({"count_all": "n", "passed_mean": "pass_rate"})


def _pa_qa_categories(t: pa.Table) -> pa.Table:
    s = t.select(["run_id", "category", "scored", "score"]).filter(pc.field("scored"))
    out = s.group_by(["run_id", "category"]).aggregate([([], "count_all"), ("score", "mean")])
    return out.rename_columns({"count_all": "n_scored", "score_mean": "accuracy"})


def _pd_frame(t: pa.Table, columns: Any) -> Any:
    return t.select(list(columns)).to_pandas()


def _pd_pmb_leaderboard(t: pa.Table) -> Any:
    df = _pd_frame(t, PMB_COLUMNS)
    out = df.groupby("run_id", sort=True).agg(
        n=("passed", "size"),
        passed=("passed", "sum"),
        pass_rate=("passed", "mean"),
        mean_precision=("precision", "mean"),
        mean_recall=("recall", "mean"),
    )
    lat = df[["run_id", "latency_ms"]].sort_values(["run_id", "latency_ms"])["latency_ms"].to_numpy()
    n = out["n"].to_numpy()
    start = np.cumsum(n) - n
    out["p50_ms"] = lat[start + rank_index(n, 0.5)]
    out["p95_ms"] = lat[start + rank_index(n, 0.95)]
    return out.reset_index()


def _pd_qa_leaderboard(t: pa.Table) -> Any:
    df = _pd_frame(t, QA_COLUMNS)
    df = df[df["scored"]]
    out = df.groupby("run_id").agg(n_scored=("score", "size"), accuracy=("score", "mean"), correct=("correct", "sum"))
    return out.reset_index()


def _pd_pmb_categories(t: pa.Table) -> Any:
    df = _pd_frame(t, ["run_id", "category", "passed"])
    return df.groupby(["run_id", "category"]).agg(n=("passed", "size"), pass_rate=("passed", "mean")).reset_index()


def _pd_qa_categories(t: pa.Table) -> Any:
    df = _pd_frame(t, ["run_id", "category", "scored", "score"])
    df = df[df["scored"]]
    out = df.groupby(["run_id", "category"]).agg(n_scored=("score", "size"), accuracy=("score", "mean"))
    return out.reset_index()


PMB_SQL = """
SELECT run_id, count(*) AS n, sum(passed::INTEGER) AS passed, avg(passed::INTEGER) AS pass_rate,
       avg(precision) AS mean_precision, avg(recall) AS mean_recall,
       quantile_disc(latency_ms, 0.5) AS p50_ms, quantile_disc(latency_ms, 0.95) AS p95_ms
FROM pmb GROUP BY run_id
"""  # DuckDB's quantile_disc is the nearest rank (checked: the results are compared with pyarrow's)
QA_SQL = """
SELECT run_id, count(*) AS n_scored, avg(score) AS accuracy, sum(correct::INTEGER) AS correct
FROM qa WHERE scored GROUP BY run_id
"""
PMB_CATEGORIES_SQL = """
SELECT run_id, category, count(*) AS n, avg(passed::INTEGER) AS pass_rate FROM pmb GROUP BY run_id, category
"""
QA_CATEGORIES_SQL = """
SELECT run_id, category, count(*) AS n_scored, avg(score) AS accuracy FROM qa WHERE scored GROUP BY run_id, category
"""


def _duckdb(sql: str, name: str) -> Callable[[pa.Table], pa.Table]:
    def run(t: pa.Table) -> pa.Table:
        duckdb = importlib.import_module("duckdb")
        with duckdb.connect() as con:
            con.register(name, t)  # an Arrow table is scanned in place, not copied
            return con.sql(sql).to_arrow_table()

    return run


def _pl_frame(t: pa.Table, columns: Any) -> Any:
    return importlib.import_module("polars").from_arrow(t.select(list(columns)))


def _pl_rank(pl: Any, p: float) -> Any:
    return ((pl.len() * p).ceil().cast(pl.Int64) - 1).clip(lower_bound=0)


def _pl_pmb_leaderboard(t: pa.Table) -> Any:
    pl = importlib.import_module("polars")
    lat = pl.col("latency_ms").sort()
    return (
        _pl_frame(t, PMB_COLUMNS)
        .group_by("run_id")
        .agg(
            n=pl.len(),
            passed=pl.col("passed").sum(),
            pass_rate=pl.col("passed").mean(),
            mean_precision=pl.col("precision").mean(),
            mean_recall=pl.col("recall").mean(),
            p50_ms=lat.get(_pl_rank(pl, 0.5)),
            p95_ms=lat.get(_pl_rank(pl, 0.95)),
        )
    )


def _pl_qa_leaderboard(t: pa.Table) -> Any:
    pl = importlib.import_module("polars")
    df = _pl_frame(t, QA_COLUMNS).filter(pl.col("scored"))
    aggs = {"n_scored": pl.len(), "accuracy": pl.col("score").mean(), "correct": pl.col("correct").sum()}
    return df.group_by("run_id").agg(**aggs)


def _pl_pmb_categories(t: pa.Table) -> Any:
    pl = importlib.import_module("polars")
    df = _pl_frame(t, ["run_id", "category", "passed"])
    return df.group_by("run_id", "category").agg(n=pl.len(), pass_rate=pl.col("passed").mean())


def _pl_qa_categories(t: pa.Table) -> Any:
    pl = importlib.import_module("polars")
    df = _pl_frame(t, ["run_id", "category", "scored", "score"]).filter(pl.col("scored"))
    return df.group_by("run_id", "category").agg(n_scored=pl.len(), accuracy=pl.col("score").mean())


TASKS: dict[str, dict[str, Callable[[pa.Table], Any]]] = {
    "pyarrow": {"pmb leaderboard": _pa_pmb_leaderboard, "qa leaderboard": _pa_qa_leaderboard,
                "pmb categories": _pa_pmb_categories, "qa categories": _pa_qa_categories},
    "pandas": {"pmb leaderboard": _pd_pmb_leaderboard, "qa leaderboard": _pd_qa_leaderboard,
               "pmb categories": _pd_pmb_categories, "qa categories": _pd_qa_categories},
    "duckdb": {"pmb leaderboard": _duckdb(PMB_SQL, "pmb"), "qa leaderboard": _duckdb(QA_SQL, "qa"),
               "pmb categories": _duckdb(PMB_CATEGORIES_SQL, "pmb"),
               "qa categories": _duckdb(QA_CATEGORIES_SQL, "qa")},
    "polars": {"pmb leaderboard": _pl_pmb_leaderboard, "qa leaderboard": _pl_qa_leaderboard,
               "pmb categories": _pl_pmb_categories, "qa categories": _pl_qa_categories},
}  # fmt: skip
"""Engine -> task -> function of the task's table (``pmb ...``: the PMB case table, ``qa ...``: the QA one)."""

TO_FRAME: dict[str, Callable[[pa.Table, pa.Table], Any] | None] = {
    "pyarrow": None,
    "pandas": lambda pmb, qa: (_pd_frame(pmb, PMB_COLUMNS), _pd_frame(qa, QA_COLUMNS)),
    "duckdb": None,
    "polars": lambda pmb, qa: (_pl_frame(pmb, PMB_COLUMNS), _pl_frame(qa, QA_COLUMNS)),
}
"""Building the engine's own frame of the leaderboards' columns from the Arrow tables (included in the tasks)."""


def as_arrow(result: Any) -> pa.Table:
    """A task's result as an Arrow table sorted by its keys, counts as int64."""
    if isinstance(result, pa.Table):
        table = result
    elif hasattr(result, "to_arrow"):  # polars
        table = result.to_arrow()
    else:  # pandas
        table = pa.Table.from_pandas(result, preserve_index=False)
    keys = [k for k in KEYS if k in table.column_names]
    table = table.sort_by([(k, "ascending") for k in keys])
    cols = {name: table[name].cast(pa.string()) for name in keys}
    for name in table.column_names:
        if name not in keys:
            cols[name] = table[name].cast(pa.int64() if name in COUNTS else pa.float64())
    return pa.table(cols)


def differences(ref: pa.Table, got: pa.Table, tol: float = 1e-12) -> list[str]:
    """What differs between two sorted results: shape, keys and counts exactly, floats to ``tol``."""
    if ref.num_rows != got.num_rows or sorted(ref.column_names) != sorted(got.column_names):
        return [f"shape {ref.num_rows} x {ref.column_names} != {got.num_rows} x {got.column_names}"]
    out = []
    for name in ref.column_names:
        a, b = ref[name], got[name]
        if name in KEYS or name in COUNTS or not pa.types.is_floating(a.type):
            if not a.equals(b):
                out.append(f"{name}: not equal")
            continue
        if not a.is_null().equals(b.is_null()):
            out.append(f"{name}: nulls differ")
            continue
        x, y = a.to_numpy(zero_copy_only=False), b.to_numpy(zero_copy_only=False)
        diff = float(np.nanmax(np.abs(x - y), initial=0.0))
        if diff > tol:
            out.append(f"{name}: max |difference| {diff:.3g} > {tol:g}")
    return out


def spot_check(pmb: pa.Table, board: pa.Table) -> None:
    """Three runs' percentiles against :func:`memeval_core.latency.nearest_rank` (the project's definition)."""
    for i in (0, board.num_rows // 2, board.num_rows - 1):
        run = board["run_id"][i].as_py()
        latencies = pmb.filter(pc.equal(pmb["run_id"], run))["latency_ms"].to_pylist()
        for p, name in ((0.5, "p50_ms"), (0.95, "p95_ms")):
            if nearest_rank(latencies, p) != board[name][i].as_py():
                raise SystemExit(f"{run} {name}: {board[name][i]} is not the nearest rank")


# ---------------------------------------------------------------------------------------- memory and reads

TASK_MEMORY_CHILD = """
import pyarrow.parquet as pq
from bench.bench_engine import task_memory
RESULT = task_memory({engine!r}, {task!r}, pq.read_table({path!r}, columns={columns!r}))
"""

READ_CHILD = {
    "pyarrow": """
import pyarrow.dataset as ds, pyarrow.compute as pc
def read():
    t = ds.dataset({path!r}).to_table(columns={columns!r}, filter=pc.field("run_id").isin({runs!r}))
    return t.num_rows, pc.sum(t[{sum!r}]).as_py()
""",
    "pyarrow (run_id as dictionary)": """
import pyarrow.parquet as pq, pyarrow.compute as pc, pyarrow.dataset  # read_table(filters=) uses pyarrow.dataset
def read():
    t = pq.read_table({path!r}, columns={columns!r}, filters=[("run_id", "in", {runs!r})], read_dictionary=["run_id"])
    return t.num_rows, pc.sum(t[{sum!r}]).as_py()
""",
    "pandas": """
import pandas as pd
def read():
    df = pd.read_parquet({path!r}, columns={columns!r}, filters=[("run_id", "in", {runs!r})])
    return len(df), float(df[{sum!r}].sum())
""",
    "duckdb": """
import duckdb, pyarrow  # pyarrow: the result is an Arrow table (its import is not the read's cost)
def read():
    sql = "SELECT {cols} FROM read_parquet(?) WHERE run_id IN ?"
    t = duckdb.sql(sql, params=[{path!r}, {runs!r}]).to_arrow_table()
    return t.num_rows, sum(x for x in t[{sum!r}].to_pylist() if x is not None)
""",
    "polars": """
import polars as pl
def read():
    df = pl.scan_parquet({path!r}).filter(pl.col("run_id").is_in({runs!r})).select({columns!r}).collect()
    return df.height, float(df[{sum!r}].sum())
""",
}
"""Engine -> a child's ``read()``: 3 columns of the rows of 2 runs from a Parquet file (what one page needs)."""

_READ_TWICE = """
import time
def _rss():
    return int([l for l in open('/proc/self/status') if l.startswith('VmRSS:')][0].split()[1]) / 1024
base_mib = _rss()
t0 = time.perf_counter()
rows, total = read()
t1 = time.perf_counter()
read()
RESULT = dict(cold=t1 - t0, warm=time.perf_counter() - t1, rows=rows, total=total, base_mib=base_mib)
"""


def _status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def task_memory(engine: str, task: str, table: pa.Table) -> dict[str, float | None]:
    """Peak RSS one run of ``task`` adds above the RSS before it, MiB (None where VmHWM cannot be reset).

    A warm-up on the first 1,000 rows first loads what the engine loads lazily (modules, thread pools)."""
    fn = TASKS[engine][task]
    fn(table.slice(0, 1000))
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
    except OSError:
        return {"task_mib": None}
    before = _status_mib("VmRSS")
    fn(table)
    return {"task_mib": max(_status_mib("VmHWM") - before, 0.0)}


def read_once(engine: str, path: Path, runs: list[str], columns: list[str], total: str) -> dict[str, Any]:
    """A fresh interpreter reads twice: cold and warm seconds, rows, the summed column, RSS before, the peak."""
    code = READ_CHILD[engine].format(path=str(path), runs=runs, columns=columns, cols=", ".join(columns), sum=total)
    return run_python(code + _READ_TWICE)


TASK_INPUT = {"pmb leaderboard": PMB_COLUMNS, "qa leaderboard": QA_COLUMNS,
              "pmb categories": ("run_id", "category", "passed"),
              "qa categories": ("run_id", "category", "scored", "score")}  # fmt: skip


# --------------------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    """Measure and report."""
    args = parse_args(__doc__ or "", argv)
    pmb_runs, qa_runs, repeat = (40, 4, 1) if args.quick else (10_000, 1_000, 3)
    engines = {name: (name in ("pyarrow", "pandas") or optional(name) is not None) for name in ENGINES}
    available = [name for name, ok in engines.items() if ok]
    tables = {"pmb": pmb_table(pmb_runs), "qa": qa_table(qa_runs)}
    n_runs = {"pmb": pmb_runs, "qa": qa_runs}
    rows: list[dict[str, Any]] = []
    details: dict[str, Any] = {
        "pmb_rows": tables["pmb"].num_rows,
        "qa_rows": tables["qa"].num_rows,
        "engines": {name: ("installed" if ok else "not installed") for name, ok in engines.items()},
        "versions": {name: getattr(optional(name), "__version__", None) for name in ENGINES},
        "timings": {},
        "reads": {},
        "agreement": {},
    }

    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        paths: dict[tuple[str, str], Path] = {}
        for name, table in tables.items():
            paths[name, "project"] = Path(tmp) / f"{name}.parquet"
            pq.write_table(table, paths[name, "project"], compression="zstd", write_statistics=False)
            paths[name, "stats"] = Path(tmp) / f"{name}-stats.parquet"
            pq.write_table(table, paths[name, "stats"], compression="zstd", row_group_size=65_536)
        details["parquet_mib"] = {f"{k[0]} {k[1]}": p.stat().st_size / 2**20 for k, p in paths.items()}
        tables = {name: pq.read_table(paths[name, "project"]) for name in tables}  # as a load would hold them

        reference: dict[str, pa.Table] = {}
        for engine in available:
            convert = TO_FRAME[engine]
            if convert is not None:
                t, _ = timed(lambda convert=convert: convert(tables["pmb"], tables["qa"]), repeat)
                rows.append({"engine": engine, "task": "to frame", "seconds": t.best, "cold s": None, "MiB": None})
                details["timings"][f"{engine} to frame"] = t
            for task, fn in TASKS[engine].items():
                name = task.split()[0]
                t, result = timed(lambda fn=fn, table=tables[name]: fn(table), repeat)
                got = as_arrow(result)
                if engine == "pyarrow":
                    reference[task] = got
                    if task == "pmb leaderboard":
                        spot_check(tables["pmb"], got)
                diff = differences(reference[task], got)
                details["agreement"][f"{engine} {task}"] = diff or "equal"
                if diff:
                    raise SystemExit(f"{engine} {task} differs from pyarrow: {'; '.join(diff)}")
                code = TASK_MEMORY_CHILD.format(
                    engine=engine, task=task, path=str(paths[name, "project"]), columns=list(TASK_INPUT[task])
                )
                quick_skip = args.quick and task != "pmb leaderboard"  # --quick: one child per engine
                mib = None if quick_skip else run_python(code)["task_mib"]
                rows.append({"engine": engine, "task": task, "seconds": t.best, "cold s": None, "MiB": mib})
                details["timings"][f"{engine} {task}"] = t

        readers = [e for e in READ_CHILD if e.split()[0] in available]
        for name in ("pmb", "qa"):
            runs = [f"run-{i:05d}" for i in (1, n_runs[name] // 2)]
            per_run = tables[name].num_rows // n_runs[name]
            for layout in ("project",) if args.quick else ("project", "stats"):
                seen = set()
                for engine in readers:
                    results = [
                        read_once(engine, paths[name, layout], runs, READ_COLUMNS[name], READ_SUM[name])
                        for _ in range(repeat)
                    ]
                    seen.update((r["rows"], round(r["total"], 6)) for r in results)
                    if any(r["rows"] != 2 * per_run for r in results):
                        raise SystemExit(
                            f"{engine} read {[r['rows'] for r in results]} rows of {name}, not {2 * per_run}"
                        )
                    peak = max(r["peak_rss_mib"] for r in results)
                    base = min(r["base_mib"] for r in results)
                    task = f"{name} read ({layout})"
                    warm, cold = min(r["warm"] for r in results), min(r["cold"] for r in results)
                    rows.append({"engine": engine, "task": task, "seconds": warm, "cold s": cold, "MiB": peak - base})
                    details["reads"][f"{engine} {task}"] = {"runs": results, "process_peak_mib": peak}
                if len(seen) != 1:
                    raise SystemExit(f"the engines read different {name} rows: {seen}")
    details["agreement_summary"] = "all engines equal pyarrow (counts exact, means 1e-12, percentiles exact)"
    for name, ok in engines.items():
        if not ok:
            rows.append({"engine": name, "task": "not installed", "seconds": None, "cold s": None, "MiB": None})
    path = report("bench_engine", args, rows, details)
    print(f"written {path}")


if __name__ == "__main__":
    main()
