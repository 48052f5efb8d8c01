"""``python -m memeval_core judge``: re-judge QA runs with any OpenAI-compatible judge (see ``docs/JUDGING.md``).

:func:`register` adds the subcommand to the main CLI's subparsers. Exit codes: 0 every run judged and
written; 1 judging stopped (endpoint failure, cost cap, write failure; what was done stays cached);
2 bad input (unknown run, run without answers, unusable prompt or price file, missing key). Every error
is one sentence on stderr. The API key comes from ``$OPENAI_API_KEY`` or the variable ``--api-key-env``
names, never from the command line, and is scrubbed from everything printed.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from memeval_core import __version__
from memeval_core.errors import cli_error
from memeval_core.judge import output
from memeval_core.judge.cache import CacheError, CallKey, VerdictCache
from memeval_core.judge.client import DEFAULT_BASE_URL, JudgeError, OpenAIJudge, RetryPolicy, public_url, scrub
from memeval_core.judge.lineup import rejudge_of
from memeval_core.judge.pricing import Price, PriceError, load_prices, money, price_of
from memeval_core.judge.progress import Progress
from memeval_core.judge.prompts import Prompt, PromptError, default_prompt, load_prompt
from memeval_core.judge.runner import Budget, Plan, plan, run
from memeval_core.qa.ingest import LoadedRun
from memeval_core.qa.models import QaRun
from memeval_core.results import load_qa_results
from memeval_core.settings import DEFAULT_RESULTS, RESULTS_ENV, datasets_dir, results_dir

CACHE_NAME = "judge-cache.sqlite"
"""The verdict cache's file name, in the output folder unless ``--cache`` says otherwise."""


class InputError(ValueError):
    """Bad input: the message is one sentence, the exit code 2."""


@dataclass(frozen=True)
class Job:
    """One run to judge, with its prompt and judge name."""

    run: LoadedRun
    prompt: Prompt
    judge: str


def _under(path: Path, root: Path) -> str | None:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def _match(wanted: str, runs: Sequence[LoadedRun], root: Path) -> LoadedRun | None:
    """The run whose id, display name or source file (one of its shards) is ``wanted``."""
    for r in runs:
        if wanted == r.run_id:
            return r
    named = [r for r in runs if r.display_name == wanted]
    if len(named) == 1:
        return named[0]
    rel = _under(Path(wanted), root) if Path(wanted).exists() else None
    for r in runs:
        if rel is not None and rel in (r.meta.source_file or "").split(" + "):
            return r
    return None


def select_runs(args: argparse.Namespace) -> list[LoadedRun]:
    """The runs ``--run`` or ``--benchmark`` name; :class:`InputError` for one that is not found."""
    root = results_dir(args.results)
    if not root.is_dir():
        raise InputError(f"results directory {root} does not exist (pass --results DIR)")
    runs = list(load_qa_results(root, datasets_dir(args.datasets)).runs)
    if args.benchmark:
        chosen = [r for r in runs if r.meta.benchmark == args.benchmark and rejudge_of(r) is None]
        if not chosen:
            known = ", ".join(sorted({r.meta.benchmark for r in runs})) or "none"
            raise InputError(f"no run of benchmark {args.benchmark!r} under {root} (benchmarks there: {known})")
        return chosen
    out = []
    for wanted in args.run:
        found = _match(wanted, runs, root)
        if found is None:
            raise InputError(
                f"no QA run under {root} has the id, name or source file {wanted!r} "
                "(list them with `python -m memeval_core leaderboard --kind qa`)"
            )
        out.append(found)
    return list({r.run_id: r for r in out}.values())


def _is_local(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def api_key(args: argparse.Namespace, base_url: str) -> str:
    """The key from the named environment variable; a local server may go without one."""
    key = os.environ.get(args.api_key_env, "").strip()
    if key:
        return key
    if _is_local(base_url):
        return "none"
    raise InputError(
        f"set ${args.api_key_env} to the judge endpoint's API key (or name another variable with --api-key-env)"
    )


def jobs(args: argparse.Namespace, runs: Sequence[LoadedRun]) -> list[Job]:
    """A job per run: the prompt (``--prompt`` or the benchmark's own) and the judge name."""
    out = []
    for r in runs:
        prompt = load_prompt(args.prompt or default_prompt(r.meta.benchmark))
        judge = args.name or f"{args.model}/{prompt.name}"
        output.check_names(r, output.verdict_names(judge, args.repeats))
        out.append(Job(r, prompt, judge))
    return out


def _summary(job: Job, doc: dict[str, Any], path: Path) -> str:
    score = job.run.with_run(QaRun.model_validate(doc)).score
    names = output.verdict_names(job.judge, doc["run"][output.REJUDGE]["repeats"])
    values = [score.per_judge_accuracy[n] for n in names if n in score.per_judge_accuracy]
    acc = f"{sum(values) / len(values):.4f}" if values else "-"
    published = "-" if job.run.score.accuracy is None else f"{job.run.score.accuracy:.4f}"
    unparsed = sum(len(q.get(output.UNPARSED, [])) for q in doc["questions"])
    what = f"accuracy {acc} under {job.judge} (published {published}), {unparsed} unparsed"
    return f"{job.run.display_name}: {what}; wrote {path}"


def _judge_one(job: Job, args: argparse.Namespace, client: OpenAIJudge, cache: VerdictCache, budget: Budget) -> str:
    positions, items = output.judged_items(job.run)
    call = CallKey(job.prompt.hash, args.model, client.base_url)
    p = plan(items, job.prompt, call, args.repeats, cache)
    progress = Progress(sys.stderr, job.run.display_name)
    results, counts = run(
        p, job.prompt, client, cache, call, concurrency=args.concurrency, budget=budget, progress=progress
    )
    raw = {(positions[t.index], t.repeat): results[t.key].raw for t in p.tasks}
    prov = output.Provenance(
        judge=job.judge,
        model=args.model,
        base_url=client.base_url,
        prompt=job.prompt.name,
        prompt_version=job.prompt.version,
        prompt_hash=job.prompt.hash,
        prompt_source=job.prompt.source,
        scale=job.prompt.scale,
        repeats=args.repeats,
        temperature=0.0,
        seed=client.seed,
        date=output.now(),
        memeval_version=__version__,
        calls=counts.calls,
        cache_hits=counts.hits,
        tokens_in=counts.tokens_in,
        tokens_out=counts.tokens_out,
        cost_usd=counts.cost,
    )
    doc = output.judged_document(job.run, positions, raw, job.prompt, prov)
    out_dir = Path(args.out) if args.out else results_dir(args.results) / output.JUDGED_DIR
    path = output.write_judged(doc, output.output_path(out_dir, job.run.run_id, job.judge))
    return _summary(job, doc, path)


def _dry_run(
    todo: Sequence[Job], args: argparse.Namespace, cache: VerdictCache, base_url: str, price: Price | None
) -> None:
    calls = 0
    cost = 0.0
    for job in todo:
        items = output.judged_items(job.run)[1]
        p: Plan = plan(items, job.prompt, CallKey(job.prompt.hash, args.model, base_url), args.repeats, cache)
        est = p.estimated_cost(price)
        calls += len(p.missing)
        cost += est or 0.0
        print(
            f"{job.run.display_name} [{job.run.run_id}]: {len(items)} answers x {args.repeats} = "
            f"{len(p.tasks)} verdicts, {len(p.cached)} cached, {len(p.missing)} calls, "
            f"estimated {money(est)}"
        )
    print(
        f"dry run: {calls} calls to {args.model} at {base_url}, "
        f"estimated {money(cost if price else None)}; nothing was sent"
    )


def main_judge(args: argparse.Namespace) -> int:
    """Run ``judge``; see the module docstring for the exit codes."""
    base_url = args.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    secrets: list[str] = []
    try:
        key = api_key(args, base_url)
        secrets = [key, *(s for s in (urlsplit(base_url).password,) if s)]
        table = load_prices(Path(args.prices) if args.prices else None)
        price = price_of(args.model, table)
        if args.max_cost is not None and price is None:
            raise InputError(f"--max-cost needs a price for {args.model}; give one in a --prices FILE")
        todo = jobs(args, select_runs(args))
        for job in todo:
            output.judged_items(job.run)  # a run without answers is refused before any call
        out_dir = Path(args.out) if args.out else results_dir(args.results) / output.JUDGED_DIR
        cache = VerdictCache(Path(args.cache) if args.cache else out_dir / CACHE_NAME)
    except (InputError, PromptError, PriceError, output.OutputError, CacheError) as exc:
        return cli_error(scrub(str(exc), secrets), 2)
    try:
        if args.dry_run:
            _dry_run(todo, args, cache, public_url(base_url), price)
            return 0
        retry = RetryPolicy(attempts=args.tries)
        client = OpenAIJudge(args.model, base_url, key, timeout=args.timeout, retry=retry)
        budget = Budget(price, args.max_cost)
        for job in todo:
            print(_judge_one(job, args, client, cache, budget))
    except (JudgeError, output.OutputError, CacheError) as exc:
        return cli_error(scrub(str(exc), secrets), 1)
    finally:
        cache.close()
    return 0


def _positive(kind: type[int] | type[float], low: float, high: float) -> Any:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is outside {low:g}..{high:g}")
        return value

    return parse


def register(subparsers: Any) -> None:
    """Add the ``judge`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser("judge", help="re-judge QA runs with any OpenAI-compatible judge (docs/JUDGING.md)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--run", nargs="+", metavar="RUN_ID_OR_FILE", help="run ids, display names or result files")
    which.add_argument("--benchmark", metavar="NAME", help="every run of this benchmark (e.g. locomo)")
    p.add_argument("--model", required=True, help="judge model name as the endpoint knows it")
    p.add_argument(
        "--base-url", metavar="URL", help=f"OpenAI-compatible endpoint (default $OPENAI_BASE_URL or {DEFAULT_BASE_URL})"
    )
    p.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="variable holding the key (default OPENAI_API_KEY)",
    )
    p.add_argument(
        "--prompt",
        metavar="NAME|FILE",
        help="mem0-locomo, longmemeval, rubric-0-5 or a prompt file (default: the benchmark's own)",
    )
    p.add_argument("--name", help="judge name in the output (default MODEL/PROMPT)")
    p.add_argument("--repeats", type=_positive(int, 1, 20), default=1, metavar="N", help="judge each answer N times")
    p.add_argument(
        "--concurrency", type=_positive(int, 1, 256), default=8, metavar="N", help="calls at once (default 8)"
    )
    p.add_argument(
        "--timeout", type=_positive(float, 0.1, 3600), default=60.0, metavar="S", help="seconds per call (default 60)"
    )
    p.add_argument(
        "--tries",
        type=_positive(int, 1, 20),
        default=6,
        metavar="N",
        help="tries per call on 429/5xx/timeouts (default 6)",
    )
    p.add_argument(
        "--max-cost", type=_positive(float, 0, 1e6), metavar="USD", help="stop before the estimated spend exceeds this"
    )
    p.add_argument("--prices", metavar="FILE", help='JSON {"model": {"input": USD, "output": USD}} per 1M tokens')
    p.add_argument(
        "--dry-run", action="store_true", help="print the calls needed and their estimated cost; call nothing"
    )
    p.add_argument(
        "--results", metavar="DIR", help=f"results directory (default: ${RESULTS_ENV} or {DEFAULT_RESULTS.name}/)"
    )
    p.add_argument("--datasets", metavar="DIR", help="folder with locomo10.json (default: found under the results)")
    p.add_argument("--out", metavar="DIR", help=f"where judged runs go (default: <results>/{output.JUDGED_DIR})")
    p.add_argument("--cache", metavar="FILE", help=f"verdict cache (default: <out>/{CACHE_NAME})")
    p.set_defaults(func=main_judge)
