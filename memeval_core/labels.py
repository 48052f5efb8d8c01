"""The one registry of what the app calls things: every column, metric and benchmark, in human words.

A page shows a table whose columns are machine keys (``mean_precision``); :func:`label` gives the header
("Mean precision"), :func:`help_text` the definition that goes into the column's help, and :data:`LABELS`
the kind of number, which :func:`formatted` turns into the one number format of the app:

- rates as percentages with one decimal (``50.4%``), differences of rates in percentage points;
- milliseconds below 1,000 as ``812 ms``, from 1,000 as seconds (``1.24 s``);
- p-values as ``< 0.001`` or three significant digits;
- counts with thousands separators; missing values as ``—``.

Downloads keep the machine keys and full precision; only what is shown is formatted. The same
registry feeds ``docs/METRICS.md`` (``python -m memeval_core.labels``).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Literal

Kind = Literal["text", "count", "rate", "points", "ratio", "ms", "p", "number", "flag"]
MISSING = "—"
"""What a missing value reads as."""


@dataclass(frozen=True)
class Label:
    """How one machine key is shown."""

    text: str
    """The header: short, human, no underscores."""
    help: str
    """One or two sentences: what the number is and how it is computed."""
    kind: Kind = "text"
    """The kind of value, which decides its format (see the module docstring)."""


_l = Label


LABELS: dict[str, Label] = {
    # --- identity
    "rank": _l("Rank", "Position within the benchmark's ranking (1 = best; ties share a rank).", "count"),
    "display_name": _l("System", "The memory system; runs of one system are told apart by their variant."),
    "system": _l("System", "The memory system under test."),
    "provider": _l("Provider", "The provider string as the report states it."),
    "run_id": _l("Run id", "Stable id of the run: file name plus the first 10 hex digits of its SHA-256."),
    "benchmark": _l("Benchmark", "Which benchmark (and PMB suite) the run belongs to."),
    "source": _l("Source file", "The result file(s), relative to the results directory."),
    "format": _l("Format", "The result format the run was imported from."),
    "status": _l("Verified", "✓ when every value the report states matches its re-derived value; ✗ N: N differ."),
    "badge": _l(
        "Status",
        "PMB: ✓ verified when every value the report states matches its re-derived value, ✗ N when N differ. "
        "QA: ✓ publishable when the run meets its benchmark's protocol, otherwise diagnostic and why.",
    ),
    "verified": _l("Verified", "Every value the report states matches the value re-derived from its cases.", "flag"),
    "mismatches": _l("Mismatches", "Stated values that differ from the re-derived ones."),
    "mismatch": _l("Mismatch", "One stated value and its re-derived value."),
    "reference": _l("Reference", "A reference system memeval simulates from the fixture, not a submitted run."),
    # --- headline scores
    "score": _l("Score", "The benchmark's main score.", "rate"),
    "score_low": _l("95% low", "Lower end of the 95% interval of the score.", "rate"),
    "score_high": _l("95% high", "Upper end of the 95% interval of the score.", "rate"),
    "interval": _l("95% interval", "The range that holds the true score with 95% confidence (method in the caption)."),
    "items": _l("Items", "Cases (PMB) or questions (QA) behind the score.", "count"),
    "pass_rate": _l("Pass rate", "Share of cases where every must and must-not assertion held.", "rate"),
    "cases": _l("Cases", "Cases scored (turns, for session runs).", "count"),
    "passed": _l("Passed", "Cases where every assertion held, re-derived from the returned ids.", "count"),
    "failed": _l("Failed", "Cases where at least one assertion failed.", "count"),
    "active_retrieval": _l(
        "Active passes",
        "Passes with a positive precision: the system returned the gold beliefs and nothing else. "
        "The only pass a system cannot get by returning everything or nothing.",
        "count",
    ),
    "structural": _l(
        "Structural passes",
        "Passes in structural categories (scope, supersession, routing, budget, ranking, isolation) without precision.",
        "count",
    ),
    "trivially_empty": _l("Empty passes", "Passes that a system returning nothing also gets.", "count"),
    "mean_precision": _l(
        "Precision", "Mean over cases with a precision: share of returned beliefs that are gold.", "rate"
    ),
    "mean_recall": _l(
        "Recall",
        "Mean over cases with a recall: share of gold beliefs returned (returning everything scores 100%).",
        "rate",
    ),
    "mean_drift": _l("Drift", "Session runs: mean of 1 − precision per turn (0% is perfect isolation).", "rate"),
    "precision": _l("Precision", "Share of returned beliefs that are gold.", "rate"),
    "recall": _l("Recall", "Share of gold beliefs returned.", "rate"),
    # --- latency
    "latency_mean_ms": _l("Mean latency", "Mean retrieval latency per case.", "ms"),
    "latency_p50_ms": _l("Median latency", "Median latency (nearest rank, as the harness computes it).", "ms"),
    "latency_p95_ms": _l("p95 latency", "95th-percentile latency (nearest rank).", "ms"),
    "latency_ms": _l("Latency", "Retrieval latency of this case.", "ms"),
    "ingestion_total_ms": _l(
        "Ingestion time", "Total time to ingest the belief corpus, when the report records it.", "ms"
    ),
    "ingestion_per_belief_ms": _l("Ingestion per belief", "Ingestion time divided by the beliefs ingested.", "ms"),
    "ingestion_beliefs": _l("Beliefs ingested", "Beliefs the report says were ingested.", "count"),
    "mean_ms": _l("Mean", "Mean latency.", "ms"),
    "p50_ms": _l("Median", "Median latency (nearest rank).", "ms"),
    "p95_ms": _l("p95", "95th-percentile latency (nearest rank).", "ms"),
    "on_front": _l("On the frontier", "No other run is both faster and passes more actively.", "flag"),
    "session_p50_ms": _l("Session median", "Median latency per session turn.", "ms"),
    "single_turn_p50_ms": _l("Single-turn median", "Median latency per single-turn case of the same system.", "ms"),
    "ratio": _l("Session ÷ single-turn", "Session median latency divided by the single-turn median.", "number"),
    "session_run_id": _l("Session run id", "Run id of the session run."),
    "single_turn_run_id": _l("Single-turn run id", "Run id of the single-turn run."),
    # --- categories and cases
    "name": _l("Category", "PMB category."),
    "category": _l("Category", "The case's or question's category."),
    "category_name": _l("Category", "The category's name."),
    "code": _l("Code", "The category code as the dataset spells it."),
    "count": _l("Questions", "Questions in this category.", "count"),
    "persona_assumed": _l(
        "Persona assumed", "Failures that depend on the persona prelude, taken from the report.", "count"
    ),
    "case_id": _l("Case", "The PMB case."),
    "turn_index": _l("Turn", "Turn number within a session case.", "count"),
    "turn": _l("Turn", "The session turn."),
    "label": _l("Turn type", "The fixture's label of the turn (e.g. drift)."),
    "description": _l("Description", "What the case tests."),
    "scope": _l("Scope", "The scope the case queries."),
    "tier": _l("Tier", "Where a belief was returned: relevant, pinned fact or open question."),
    "id": _l("Belief", "Belief id."),
    "belief": _l("Belief text", "The belief's text from beliefs.seed.json."),
    "gold": _l("Gold", "✓ when the case expects this belief."),
    "value": _l("Value", "The assertion's value."),
    "assertion": _l("Assertion", "The must / must-not assertion."),
    "failure": _l("Failure", "Why the case failed."),
    "failures": _l("Failures", "Failed assertions (PMB) or questions without an answer or verdict (QA).", "count"),
    "from_report": _l("From the report", "A persona-prelude failure taken from the report (not re-derivable).", "flag"),
    "pass_type": _l("Pass type", "Active, structural or empty pass; empty when the case failed."),
    "n_returned": _l("Returned", "Beliefs returned.", "count"),
    "n_correct": _l("Correct", "Returned beliefs that are gold.", "count"),
    "n_unexpected": _l("Unexpected", "Returned beliefs that are not gold.", "count"),
    "n_forbidden": _l("Forbidden", "Returned beliefs the case forbids.", "count"),
    "n_missing": _l("Missing", "Gold beliefs not returned.", "count"),
    "returned_nothing": _l("Returned nothing", "Nothing came back in any tier.", "flag"),
    # --- session drift
    "harness_drift": _l("Drift", "1 − precision of the turn (the harness's definition).", "rate"),
    "topic_drift": _l("Topic drift", "Share of returned beliefs about topics introduced by drift turns.", "rate"),
    "is_drift_turn": _l("Drift turn", "The fixture labels this turn drift.", "flag"),
    "drift_belief_ids": _l("Drift beliefs", "Returned beliefs about drift topics."),
    "n_drift_beliefs": _l("Drift beliefs", "Returned beliefs about drift topics.", "count"),
    "n_non_pinned": _l("Returned (not pinned)", "Returned beliefs that are not pinned facts.", "count"),
    "n_unattributed": _l("Unattributed", "Returned beliefs without a topic.", "count"),
    "unattributed_ids": _l("Unattributed beliefs", "Returned beliefs without a topic."),
    "noise_ids": _l("Noise", "Beliefs the turn's noise check says must not surface."),
    "required_missing": _l("Required, missing", "Required beliefs the turn did not return."),
    "introduced": _l("Introduced", "Topics this drift turn introduces."),
    "topics": _l("Topics", "Topics of the turn."),
    "turns": _l("Turns", "Session turns.", "count"),
    # --- compare
    "outcome": _l("Outcome", "Who passed the case: A only, B only, both or neither."),
    "a_passed": _l("A passed", "System A passed the case.", "flag"),
    "b_passed": _l("B passed", "System B passed the case.", "flag"),
    "a_precision": _l("A precision", "System A's precision on the case.", "rate"),
    "b_precision": _l("B precision", "System B's precision on the case.", "rate"),
    "a_recall": _l("A recall", "System A's recall on the case.", "rate"),
    "b_recall": _l("B recall", "System B's recall on the case.", "rate"),
    "a_latency_ms": _l("A latency", "System A's latency on the case.", "ms"),
    "b_latency_ms": _l("B latency", "System B's latency on the case.", "ms"),
    "n": _l("Cases", "Paired cases (both systems scored them).", "count"),
    "b": _l("A only", "Cases A passes and B fails (McNemar's b).", "count"),
    "c": _l("B only", "Cases B passes and A fails (McNemar's c).", "count"),
    "both_passed": _l("Both passed", "Cases both systems pass.", "count"),
    "both_failed": _l("Both failed", "Cases both systems fail.", "count"),
    "mcnemar_p": _l(
        "McNemar p", "Exact McNemar test on the discordant cases: the chance of a split this uneven if A = B.", "p"
    ),
    "holm_p": _l("Holm p", "McNemar p adjusted for testing every category (Holm).", "p"),
    "pass_rate_diff": _l("Pass-rate gap", "Pass rate of A minus B, in percentage points.", "points"),
    "pass_rate_ci_low": _l("Gap 95% low", "Lower end of the paired-bootstrap interval of the gap.", "points"),
    "pass_rate_ci_high": _l("Gap 95% high", "Upper end of the paired-bootstrap interval of the gap.", "points"),
    "pass_rate_tied": _l("Tied", "The interval includes zero: no real difference.", "flag"),
    "precision_diff": _l("Precision gap", "Mean precision of A minus B, in percentage points.", "points"),
    "precision_ci_low": _l("Precision gap 95% low", "Lower end of its paired-bootstrap interval.", "points"),
    "precision_ci_high": _l("Precision gap 95% high", "Upper end of its paired-bootstrap interval.", "points"),
    "precision_tied": _l("Precision tied", "The interval includes zero.", "flag"),
    "n_precision": _l("Cases with precision", "Paired cases where both have a precision.", "count"),
    "wins": _l("Wins", "Categories where A is significantly better.", "count"),
    "losses": _l("Losses", "Categories where A is significantly worse.", "count"),
    "ties_both_passed": _l("Ties (both pass)", "Cases both pass.", "count"),
    "ties_both_failed": _l("Ties (both fail)", "Cases both fail.", "count"),
    "other": _l("Other system", "The system compared with A."),
    "other_run_id": _l("Other run id", "Run id of the other system."),
    "chosen": _l("Shown", "The pair shown above.", "flag"),
    # --- QA
    "accuracy": _l(
        "Accuracy", "Mean question score: each question's verdicts averaged over judges; failures count as 0.", "rate"
    ),
    "majority_accuracy": _l("Majority accuracy", "Share of questions a strict majority of verdicts passes.", "rate"),
    "accuracy_without_disputed": _l(
        "Accuracy, undisputed",
        "LoCoMo: accuracy without the questions whose gold answer locomo-audit disputes.",
        "rate",
    ),
    "n_disputed": _l("Disputed", "Scored questions with a disputed gold answer.", "count"),
    "n_questions": _l("Questions", "Questions in the denominator (failures included).", "count"),
    "n_judges": _l("Judges", "Distinct verdict sources.", "count"),
    "n_repeats": _l("Repeats", "Repeats of one configuration combined in the row.", "count"),
    "accuracy_std": _l("Spread (SD)", "Standard deviation of accuracy across repeats.", "points"),
    "accuracy_min": _l("Lowest repeat", "Lowest repeat accuracy.", "rate"),
    "accuracy_max": _l("Highest repeat", "Highest repeat accuracy.", "rate"),
    "rank_group": _l("Ranked among", "Runs are ranked only against runs of the same benchmark and category-5 rule."),
    "includes_adversarial": _l("Category 5 scored", "LoCoMo: the adversarial category is scored.", "flag"),
    "publishable": _l("Publishable", "The run meets its benchmark's declared protocol (computed).", "flag"),
    "not_publishable_because": _l("Why diagnostic", "Every protocol condition the run fails."),
    "top_k": _l("Top k", "Memories retrieved per question.", "count"),
    "answer_model": _l("Answer model", "Model that generated the answers."),
    "judge_models": _l("Judge models", "Models behind the judges."),
    "joined": _l("Joined to LoCoMo", "How the questions matched locomo10.json."),
    "question": _l("Question", "The question."),
    "question_id": _l("Question id", "The question's id in the dataset."),
    "gold_answer": _l("Gold answer", "The dataset's reference answer."),
    "answer": _l("Answer", "The system's answer."),
    "judge": _l("Judge", "Verdict source."),
    "judges": _l("Judges", "Judge names with the accuracy each assigns."),
    "judge_a": _l("Judge A", "First judge of the pair."),
    "judge_b": _l("Judge B", "Second judge of the pair."),
    "statistic": _l("Statistic", "Agreement statistic."),
    "estimate": _l("Agreement", "The statistic's value (1 = perfect agreement, 0 = chance).", "ratio"),
    "ci_low": _l("95% low", "Lower end of the bootstrap interval.", "ratio"),
    "ci_high": _l("95% high", "Upper end of the bootstrap interval.", "ratio"),
    "standard_error": _l("Standard error", "Bootstrap standard error.", "ratio"),
    "n_items": _l("Questions", "Questions the judges both graded.", "count"),
    "n_graded": _l("Graded", "Questions this judge graded.", "count"),
    "n_undefined": _l("Undefined", "Resamples where the statistic is undefined.", "count"),
    "detail": _l("Detail", "How the statistic was computed."),
    "kendall_tau_b": _l("Kendall τ", "Rank correlation of the two judges' rankings (1 = same order).", "ratio"),
    "tau_ci_low": _l("τ 95% low", "Lower end of the bootstrap interval of τ.", "ratio"),
    "tau_ci_high": _l("τ 95% high", "Upper end of the bootstrap interval of τ.", "ratio"),
    "swapped_pairs": _l("Swapped pairs", "Pairs of runs the two judges order differently.", "count"),
    "leader_a": _l("Leader, judge A", "The top run under judge A."),
    "leader_b": _l("Leader, judge B", "The top run under judge B."),
    "leader_changed": _l("Leader changes", "The two judges put different runs first.", "flag"),
    "rank_spread": _l("Rank spread", "Largest minus smallest rank of the run across judges.", "count"),
    "spread": _l("Accuracy spread", "Highest minus lowest accuracy of the run across judges.", "points"),
    "passed_by": _l("Passed by", "Judges that pass the answer."),
    "failed_by": _l("Failed by", "Judges that fail the answer."),
    # --- publish
    "change": _l("Change", "Added, removed or changed since the last export."),
    "fields": _l("Fields", "Which values changed."),
    # --- keys added for the leaderboard, categories, QA, publish and upload pages
    "ranked_accuracy": _l(
        "Ranked by", "The accuracy the table is ranked by: one judge's alone, or the share a majority passes.", "rate"
    ),
    "failure_reasons": _l(
        "Failure reasons", "Failed questions by reason (no answer, error, not judged); each scores 0."
    ),
    "ndcg@5": _l(
        "NDCG@5", "Mean NDCG@5 of the retrieved ids against the gold evidence ids (questions with evidence).", "ratio"
    ),
    "p@5": _l("P@5", "Mean precision@5: gold ids among the first 5 retrieved, divided by 5.", "rate"),
    "r@5": _l("R@5", "Mean recall@5: share of the gold evidence ids among the first 5 retrieved.", "rate"),
    "mrr@5": _l("MRR@5", "Mean reciprocal rank of the first gold id in the first 5 retrieved (0 if none).", "ratio"),
    "f1@5": _l("F1@5", "Mean per-question F1 of precision@5 and recall@5.", "ratio"),
    "retrieval_queries": _l(
        "Questions with evidence", "Questions with gold evidence ids the retrieval metrics average over.", "count"
    ),
    "memeval": _l("memeval name", "The name memeval shows for the code (its declared convention)."),
    "size": _l("Size", "Bytes.", "count"),
    "provisional_rank": _l("Provisional rank", "Where the run would rank among the runs already loaded."),
    "upstream_repository": _l("Upstream repository", "Where the run's file is published (memeval's catalogue)."),
    "upstream_commit": _l("Upstream commit", "The commit the catalogue pins the file at."),
    "upstream_path": _l("Upstream path", "The file's path in its repository."),
    "licence": _l("Licence", "The licence the file is published under."),
    "made_by": _l(
        "Provenance",
        "What the report says about how it was made: the package and version, the day it ran, and the "
        "provider wrapper it talked to (memeval's runner writes all three; most published baselines say nothing).",
    ),
    # --- keys added for the judges, latency and session drift pages
    "agreement_scope": _l(
        "Questions of", "Which questions the statistic uses: one run's, or those of all selected runs pooled."
    ),
    "judges_compared": _l("Judges compared", "The judges the statistic compares."),
    "raw_agreement": _l("Raw agreement", "Mean share of judge pairs that give a question the same pass/fail.", "rate"),
    "unanimity": _l("Unanimity", "Share of questions on which every judge gives the same pass/fail.", "rate"),
    "cohen_kappa": _l(
        "Cohen's κ", "Pass/fail agreement of two judges, corrected for chance (1 = perfect, 0 = chance).", "ratio"
    ),
    "fleiss_kappa": _l(
        "Fleiss' κ", "Pass/fail agreement of all judges corrected for chance, on questions every judge graded.", "ratio"
    ),
    "krippendorff_alpha_nominal": _l(
        "Krippendorff's α (pass/fail)", "Pass/fail agreement of all judges corrected for chance; allows gaps.", "ratio"
    ),
    "krippendorff_alpha_interval": _l(
        "Krippendorff's α (scores)",
        "Agreement of the judges on their rescaled scores (interval scale), corrected for chance; graded judges only.",
        "ratio",
    ),
    "judge_accuracy": _l(
        "Accuracy",
        "Mean of this judge's rescaled scores (0–5 rubric ÷ 5; binary as is); failed questions count 0.",
        "rate",
    ),
    "judge_pass_rate": _l(
        "Pass rate", "Share of questions this judge passes (rescaled score ≥ 0.6); failed questions fail.", "rate"
    ),
    "score_spread": _l("Score spread", "Highest minus lowest rescaled score (0 to 1) the judges gave.", "number"),
    "min_ms": _l("Fastest", "Lowest latency of any case.", "ms"),
    "lower_fence_ms": _l("Lower whisker", "Lowest latency within 1.5 × IQR below the first quartile (Tukey).", "ms"),
    "q1_ms": _l("First quartile", "25th percentile of the per-case latency (linear interpolation).", "ms"),
    "median_ms": _l("Median", "Median per-case latency (linear interpolation, as the box plot draws it).", "ms"),
    "q3_ms": _l("Third quartile", "75th percentile of the per-case latency (linear interpolation).", "ms"),
    "upper_fence_ms": _l("Upper whisker", "Highest latency within 1.5 × IQR above the third quartile (Tukey).", "ms"),
    "max_ms": _l("Slowest", "Highest latency of any case.", "ms"),
    "turn_status": _l(
        "Outcome", "No drift, drift, or returned nothing (and whether the turn required a belief that went missing)."
    ),
    "turns_returned_nothing": _l("Empty turns", "Turns on which nothing came back in any tier.", "count"),
    "turns_required_missing": _l(
        "Empty, belief required", "Empty turns that required a belief: a miss, not isolation.", "count"
    ),
    # --- keys added for the compare and case pages
    "pass_rate_interval": _l("Gap 95% interval", "Paired-bootstrap interval of the pass-rate gap (A − B)."),
    "precision_interval": _l("Precision gap 95% interval", "Paired-bootstrap interval of the precision gap."),
    "a_wins": _l("A wins", "Paired cases A passes and this system fails.", "count"),
    "a_losses": _l("A loses", "Paired cases this system passes and A fails.", "count"),
    "expected": _l("Asked for", "What the case asks of this belief, assertion by assertion."),
    "n_pinned": _l("Pinned facts", "Beliefs returned in the pinned-facts tier.", "count"),
    "n_relevant": _l("Relevant", "Beliefs returned in the relevant-beliefs tier.", "count"),
    "n_open_questions": _l("Open questions", "Beliefs returned in the open-questions tier (— unrecorded).", "count"),
    "qa_b": _l("A only", "Questions A answers correctly and B does not (McNemar's b).", "count"),
    "qa_c": _l("B only", "Questions B answers correctly and A does not (McNemar's c).", "count"),
    "both_correct": _l("Both correct", "Questions both answer correctly (mean verdict score ≥ 0.6).", "count"),
    "both_wrong": _l("Both wrong", "Questions neither answers correctly (failures count as wrong).", "count"),
    "accuracy_diff": _l("Share-correct gap", "Share of questions answered correctly, A minus B.", "points"),
    "accuracy_interval": _l("Share-correct 95% interval", "Paired-bootstrap interval of the share-correct gap."),
    "accuracy_tied": _l("Share tied", "The share-correct interval includes zero: no real difference.", "flag"),
    "score_diff": _l("Score gap", "Mean score (the leaderboard's accuracy), A minus B.", "points"),
    "score_interval": _l("Score gap 95% interval", "Paired-bootstrap interval of the mean-score gap."),
    "score_tied": _l("Score tied", "The mean-score interval includes zero: no real difference.", "flag"),
    "a_answer": _l("A answer", "System A's answer."),
    "b_answer": _l("B answer", "System B's answer."),
    "a_score": _l("A score", "System A's mean rescaled verdict score on the question.", "rate"),
    "b_score": _l("B score", "System B's mean rescaled verdict score on the question.", "rate"),
    "a_correct": _l("A correct", "System A's score is at least 0.6.", "flag"),
    "b_correct": _l("B correct", "System B's score is at least 0.6.", "flag"),
    "a_failure": _l("A failure", "Why A's question scores 0: no answer, error or not judged."),
    "b_failure": _l("B failure", "Why B's question scores 0: no answer, error or not judged."),
    "verdict_score": _l("Score", "The judge's score on its own scale.", "number"),
    "verdict_scale": _l("Scale", "The judge's scale (binary, 0–5 rubric, ...)."),
    "verdict_rescaled": _l("Rescaled", "The score rescaled to 0–100%.", "rate"),
    "verdict_passes": _l("Passes", "The verdict passes the answer.", "flag"),
    "verdict_model": _l("Judge model", "The model behind the judge, when the run says."),
    "verdict_label": _l("Judge's label", "The judge's own label of the answer, when it gives one."),
}
"""Every machine key a page shows, with its header, definition and kind."""

BENCHMARKS: dict[str, str] = {
    "pmb-single-turn": "PrecisionMemBench · single-turn",
    "pmb-session": "PrecisionMemBench · session",
    "locomo": "LoCoMo",
    "longmemeval-s": "LongMemEval-S",
    "longmemeval-m": "LongMemEval-M",
    "longmemeval-oracle": "LongMemEval (oracle)",
    "longmemeval": "LongMemEval",
    "evolving-events": "Evolving Events",
}
"""Human names of the benchmarks memeval knows; any other id is shown as it is, as plain text."""


def category_header(code: str, name: str | None) -> str:
    """Header of a QA category's accuracy column: its name in words, then the dataset's code (``Multi hop · 1``)."""
    words = (name or code).replace("_", " ").replace("-", " ")
    words = words[:1].upper() + words[1:]
    same = words.lower() == code.replace("_", " ").replace("-", " ").lower()
    return words if same else f"{words} · {code}"


def judge_header(judge: str) -> str:
    """Header of one judge's accuracy column."""
    return f"Judge · {judge}"


def label(key: str) -> str:
    """The header of ``key``; raise :class:`KeyError` for a key the registry lacks (a bug to fix here)."""
    return LABELS[key].text


def help_text(key: str) -> str:
    """The definition of ``key`` for column help."""
    return LABELS[key].help


def benchmark_name(benchmark: str) -> str:
    """A benchmark's human name; an unknown id as it is."""
    return BENCHMARKS.get(benchmark, benchmark)


def rate(value: float | None, digits: int = 1) -> str:
    """``0.5039`` → ``50.4%``; missing → ``—``."""
    return MISSING if value is None or math.isnan(value) else f"{100 * value:.{digits}f}%"


def points(value: float | None, digits: int = 1) -> str:
    """A difference of rates in percentage points, signed: ``+12.3 pp``."""
    return MISSING if value is None or math.isnan(value) else f"{100 * value:+.{digits}f} pp"


def milliseconds(value: float | None) -> str:
    """``812 ms`` below one second, ``1.24 s`` from one second; missing → ``—``."""
    if value is None or math.isnan(value):
        return MISSING
    return f"{value:,.0f} ms" if abs(value) < 1000 else f"{value / 1000:,.2f} s"


def p_value(p: float | None) -> str:
    """``< 0.001`` below one in a thousand, else three significant digits; missing → ``—``."""
    if p is None or math.isnan(p):
        return MISSING
    return "< 0.001" if p < 0.001 else f"{p:.3g}"


def number(value: float | None, digits: int = 3) -> str:
    """A plain number with ``digits`` significant digits and thousands separators."""
    if value is None or math.isnan(value):
        return MISSING
    return f"{value:,.{digits}g}" if abs(value) < 10**digits else f"{value:,.0f}"


def formatted(key: str, value: object) -> str:
    """``value`` of column ``key`` in the app's one number format."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    kind = LABELS[key].kind if key in LABELS else "text"
    if isinstance(value, bool) or kind == "flag":
        return "✓" if value else ""
    if isinstance(value, int | float):
        if kind == "rate":
            return rate(float(value))
        if kind == "points":
            return points(float(value))
        if kind == "ms":
            return milliseconds(float(value))
        if kind == "p":
            return p_value(float(value))
        if kind == "count":
            return f"{int(value):,}"
        if kind == "ratio":
            return f"{value:.3f}"
        return number(float(value))
    return str(value)


def metrics_doc() -> str:
    """Markdown of the registry: every column with its header, kind and definition (``docs/METRICS.md``)."""
    lines = ["# Metrics and columns", "", "Generated from `memeval_core/labels.py`.", ""]
    lines += ["| key | header | kind | definition |", "|---|---|---|---|"]
    lines += [f"| `{k}` | {v.text} | {v.kind} | {v.help} |" for k, v in sorted(LABELS.items())]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(metrics_doc())
