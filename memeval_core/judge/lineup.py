"""Line judged runs up with the runs they re-judge, and measure how much a ranking depends on the judge.

A judged file (:mod:`memeval_core.judge.output`) loads as its own run. :func:`fold` puts its new verdicts
back on the original run's questions (matched by question id) when the original is loaded too (its
``run.rejudge.original_run_id`` equals a loaded run's id, which holds the source's SHA-256, so a changed
original no longer matches), re-scores it, and leaves the judged file out; a judged file whose original
is absent stays a run of its own (it carries the original verdicts too). The app's pages show folded runs,
so the Judges page sees one run graded by its own judges plus every re-judge, and the QA details page can
rank by any of them.

:func:`sensitivity` tabulates, per rank group (benchmark, and whether LoCoMo category 5 is scored), each
run's accuracy as published (its own judges) and under each re-judge, the spread, the rank under each,
and Kendall's tau-b between every two judges' rankings over the runs both graded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

from memeval_core.agreement.rank_correlation import kendall_tau_b
from memeval_core.judge.output import REJUDGE
from memeval_core.qa.ingest import LoadedRun, QaRunHeader
from memeval_core.qa.judges import judge_accuracy
from memeval_core.qa.leaderboard import rank_group
from memeval_core.qa.models import QaQuestion, Verdict

PUBLISHED = "as published"
"""The column of a run's accuracy under its own judges, as its source published them."""


def rejudge_of(run: QaRunHeader) -> dict[str, Any] | None:
    """The ``run.rejudge`` block of a judged run, else None."""
    block = (run.meta.model_extra or {}).get(REJUDGE)
    return block if isinstance(block, dict) and isinstance(block.get("original_run_id"), str) else None


@dataclass(frozen=True)
class Folded:
    """Loaded runs with judged files folded into the runs they re-judge."""

    runs: tuple[QaRunHeader, ...]
    """Every run, in load order, minus the judged files that were folded in (whole where :func:`fold` was given
    whole runs; the runs it folded judges into are always whole)."""
    added: Mapping[str, tuple[str, ...]]
    """Run id -> the judges re-judging added to it (only runs that have some)."""
    published: Mapping[str, float | None]
    """Run id -> accuracy under the run's own judges, before folding (every run)."""
    folded_from: Mapping[str, tuple[str, ...]]
    """Run id -> the judged runs folded into it."""


def _extra_verdicts(judged: LoadedRun, names: set[str]) -> dict[str, list[Verdict]]:
    out: dict[str, list[Verdict]] = {}
    for q in judged.run.questions:
        extra = [v for v in q.verdicts if v.judge in names]
        if extra:
            out[q.question_id] = extra
    return out


def _fold_one(original: LoadedRun, judged: Sequence[LoadedRun]) -> tuple[LoadedRun, tuple[str, ...]]:
    added: list[str] = []
    by_question: dict[str, list[Verdict]] = {}
    for j in judged:
        block = rejudge_of(j) or {}
        names = {str(n) for n in block.get("added_judges", [])} - set(original.score.judges) - set(added)
        added.extend(n for n in block.get("added_judges", []) if n in names)
        for qid, vs in _extra_verdicts(j, names).items():
            by_question.setdefault(qid, []).extend(vs)
    if not added:
        return original, ()
    questions: list[QaQuestion] = [
        q.model_copy(update={"verdicts": [*q.verdicts, *by_question[q.question_id]]})
        if q.question_id in by_question
        else q
        for q in original.run.questions
    ]
    run = original.run.model_copy(update={"questions": questions})
    return original.with_run(run), tuple(added)


def plan(runs: Sequence[QaRunHeader]) -> dict[str, tuple[str, ...]]:
    """Run id -> the judged runs among ``runs`` that :func:`fold` folds into it, from the runs' metadata alone
    (a page reads whole only these runs and their originals)."""
    ids = {r.run_id for r in runs}
    into: dict[str, list[str]] = {}
    for r in runs:
        block = rejudge_of(r)
        if block is not None and block["original_run_id"] in ids and block["original_run_id"] != r.run_id:
            into.setdefault(block["original_run_id"], []).append(r.run_id)
    return {original: tuple(judged) for original, judged in into.items()}


def _whole(run: QaRunHeader) -> LoadedRun:
    if not isinstance(run, LoadedRun):
        raise ValueError(f"{run.run_id}: a run that judges are folded into (or from) must be read whole")
    return run


def fold(runs: Sequence[QaRunHeader]) -> Folded:
    """Fold every judged run whose original is among ``runs`` into it (see the module docstring).

    The runs :func:`plan` names (originals and their judged runs) must be whole (:class:`LoadedRun`); any other
    run may be a header and is passed on as it is.
    """
    into = plan(runs)
    by_id = {r.run_id: r for r in runs}
    hidden = {j for judged in into.values() for j in judged}
    out: list[QaRunHeader] = []
    added: dict[str, tuple[str, ...]] = {}
    for r in runs:
        if r.run_id in hidden:
            continue
        judged = [_whole(by_id[j]) for j in into.get(r.run_id, ())]
        folded, names = _fold_one(_whole(r), judged) if judged else (r, ())
        out.append(folded)
        if names:
            added[r.run_id] = names
    return Folded(
        runs=tuple(out),
        added=added,
        published={r.run_id: r.score.accuracy for r in runs if r.run_id not in hidden},
        folded_from=into,
    )


# ------------------------------------------------------------------ judge sensitivity


@dataclass(frozen=True)
class Sensitivity:
    """Accuracy of each run of one rank group under each judge."""

    group: str
    """``benchmark`` or ``benchmark (with/without category 5)``."""
    judges: tuple[str, ...]
    """:data:`PUBLISHED` first, then every re-judge in first-seen order."""
    run_ids: tuple[str, ...]
    """Runs, best published accuracy first."""
    display_names: Mapping[str, str]
    """Run id -> display name."""
    accuracy: Mapping[str, Mapping[str, float]]
    """Judge -> run id -> accuracy (runs the judge did not grade are absent)."""

    def spread(self, run_id: str) -> float | None:
        """Highest minus lowest accuracy of the run across the judges that graded it; None under one judge."""
        values = [a[run_id] for a in self.accuracy.values() if run_id in a]
        return max(values) - min(values) if len(values) >= 2 else None

    def ranks(self, judge: str) -> dict[str, int]:
        """Rank of each run the judge graded: 1 + runs with a strictly higher accuracy."""
        acc = self.accuracy[judge]
        return {r: 1 + sum(v > a for v in acc.values()) for r, a in acc.items()}

    def tau(self, a: str, b: str) -> tuple[float, int]:
        """Kendall's tau-b between the rankings under ``a`` and ``b`` over the runs both graded, and their number."""
        common = [r for r in self.run_ids if r in self.accuracy[a] and r in self.accuracy[b]]
        if len(common) < 2:
            return math.nan, len(common)
        x = [self.accuracy[a][r] for r in common]
        y = [self.accuracy[b][r] for r in common]
        return kendall_tau_b(x, y), len(common)

    def complete_runs(self) -> tuple[str, ...]:
        """Runs graded by every judge of the table (what a rank-per-judge chart can draw)."""
        return tuple(r for r in self.run_ids if all(r in a for a in self.accuracy.values()))

    def only(self, run_ids: Sequence[str]) -> Sensitivity:
        """The same table over ``run_ids`` alone (ranks and tau recomputed among them)."""
        keep = [r for r in self.run_ids if r in set(run_ids)]
        accuracy = {j: {r: a[r] for r in keep if r in a} for j, a in self.accuracy.items()}
        return replace(self, run_ids=tuple(keep), accuracy=accuracy)

    def rows(self) -> list[dict[str, Any]]:
        """One row per run: accuracy under each judge, the spread, and the rank under each judge."""
        ranks = {j: self.ranks(j) for j in self.judges}
        out = []
        for rid in self.run_ids:
            row: dict[str, Any] = {"display_name": self.display_names[rid], "run_id": rid}
            row.update({f"accuracy ({j})": self.accuracy[j].get(rid) for j in self.judges})
            row["spread"] = self.spread(rid)
            row.update({f"rank ({j})": ranks[j].get(rid) for j in self.judges})
            out.append(row)
        return out

    def tau_rows(self) -> list[dict[str, Any]]:
        """Kendall's tau-b of every pair of judges, with the number of runs it compares."""
        out = []
        for a, b in combinations(self.judges, 2):
            tau, n = self.tau(a, b)
            out.append({"judge_a": a, "judge_b": b, "kendall_tau_b": None if math.isnan(tau) else tau, "n_runs": n})
        return out


def sensitivity(folded: Folded, runs: Sequence[QaRunHeader] | None = None) -> tuple[Sensitivity, ...]:
    """A :class:`Sensitivity` per rank group holding a re-judged run (``runs``: a subset of ``folded.runs``)."""
    chosen = folded.runs if runs is None else runs
    groups: dict[str, list[QaRunHeader]] = {}
    for r in chosen:
        groups.setdefault(rank_group(r), []).append(r)
    out = []
    for group, members in groups.items():
        rejudges = list(dict.fromkeys(j for r in members for j in folded.added.get(r.run_id, ())))
        if not rejudges:
            continue
        accuracy: dict[str, dict[str, float]] = {PUBLISHED: {}}
        accuracy.update({j: {} for j in rejudges})
        for r in members:
            if (pub := folded.published.get(r.run_id)) is not None:
                accuracy[PUBLISHED][r.run_id] = pub
            added = folded.added.get(r.run_id, ())
            for a in judge_accuracy(_whole(r)) if added else ():
                if a.judge in added and a.accuracy is not None:
                    accuracy[a.judge][r.run_id] = a.accuracy
        order = sorted(members, key=lambda r: (-accuracy[PUBLISHED].get(r.run_id, -1.0), r.display_name))
        out.append(
            Sensitivity(
                group=group,
                judges=(PUBLISHED, *rejudges),
                run_ids=tuple(r.run_id for r in order),
                display_names={r.run_id: r.display_name for r in members},
                accuracy=accuracy,
            )
        )
    return tuple(out)
