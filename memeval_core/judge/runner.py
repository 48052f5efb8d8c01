"""Judge a run's answers: plan the calls against the cache, then make the missing ones with bounded concurrency.

:func:`plan` keys every (answer, repeat) (:func:`memeval_core.judge.cache.cache_key`), splits the distinct keys
into cached and missing and renders the prompts of the missing ones; it makes no call (``--dry-run`` prints it).
:func:`run` makes the missing calls on ``concurrency`` threads, storing each response in the cache the
moment it arrives. Before each call it reserves the call's estimated cost (:class:`Budget`): a call that
could take the total past ``--max-cost`` is not made, and the run stops. The first call that fails for
good stops the run too; calls already under way finish and are stored. Either way :class:`RunStoppedError`
says, in one sentence, what happened and how much is done.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from memeval_core.judge.cache import Cached, CacheError, CallKey, VerdictCache, cache_key
from memeval_core.judge.client import Completer, JudgeError
from memeval_core.judge.pricing import Price, estimate_tokens, money
from memeval_core.judge.progress import Progress, Snapshot
from memeval_core.judge.prompts import Item, Prompt


class RunStoppedError(JudgeError):
    """The run stopped before every verdict was had; what was done is in the cache."""


@dataclass(frozen=True)
class Task:
    """One call: an item's rendered prompt for one repeat."""

    index: int
    """Position of the item in the planned list."""
    repeat: int
    """Repeat number, 1-based."""
    key: str
    """Cache key."""
    text: str = ""
    """The rendered prompt (rendered for the calls to make only; empty for answers already cached)."""


@dataclass(frozen=True)
class Plan:
    """Every task of a run, and which of their keys the cache already holds."""

    tasks: tuple[Task, ...]
    """One per item and repeat, in item order."""
    cached: Mapping[str, Cached]
    """Responses already stored, by key."""
    missing: tuple[Task, ...]
    """One task per distinct key not yet stored: the calls to make."""
    estimated_tokens_in: int
    """Estimated prompt tokens of the missing calls."""
    estimated_tokens_out: int
    """Output-token bound of the missing calls (``max_tokens`` each)."""

    def estimated_cost(self, price: Price | None) -> float | None:
        """Estimated dollars of the missing calls; None without a price."""
        return None if price is None else price.cost(self.estimated_tokens_in, self.estimated_tokens_out)


def plan(items: Sequence[Item], prompt: Prompt, call: CallKey, repeats: int, cache: VerdictCache) -> Plan:
    """Key every call and look the keys up in the cache; render the prompts of the missing ones (no call is made)."""
    tasks = []
    for i, item in enumerate(items):
        template = prompt.template_key(item)
        for r in range(1, repeats + 1):
            key = cache_key(call, template, item.question, item.gold_answer, item.answer, r)
            tasks.append(Task(i, r, key))
    cached = cache.get_many(t.key for t in tasks)
    firsts = {t.key: t for t in tasks if t.key not in cached}.values()
    missing = tuple(replace(t, text=prompt.render(items[t.index])) for t in firsts)
    return Plan(
        tasks=tuple(tasks),
        cached=cached,
        missing=missing,
        estimated_tokens_in=sum(estimate_tokens(t.text) for t in missing),
        estimated_tokens_out=prompt.max_tokens * len(missing),
    )


class Budget:
    """Spending so far plus what calls under way may cost, against an optional cap (thread-safe)."""

    def __init__(self, price: Price | None, limit: float | None) -> None:
        if limit is not None and price is None:
            raise ValueError("a cost limit needs a price")
        self.price = price
        self.limit = limit
        self.spent = 0.0
        self.reserved = 0.0
        self._lock = threading.Lock()

    def estimate(self, text: str, max_tokens: int) -> float:
        """Upper-leaning cost of one call."""
        return 0.0 if self.price is None else self.price.cost(estimate_tokens(text), max_tokens)

    def reserve(self, amount: float) -> bool:
        """Hold ``amount`` for a call; False (nothing held) when it could take the total past the limit."""
        with self._lock:
            if self.limit is not None and self.spent + self.reserved + amount > self.limit:
                return False
            self.reserved += amount
            return True

    def settle(self, amount: float, tokens_in: int, tokens_out: int) -> None:
        """Replace a reservation by the call's actual cost."""
        with self._lock:
            self.reserved -= amount
            self.spent += 0.0 if self.price is None else self.price.cost(tokens_in, tokens_out)

    def release(self, amount: float) -> None:
        """Drop a reservation whose call failed."""
        with self._lock:
            self.reserved -= amount


class _State:
    """Counters and results shared by the worker threads."""

    def __init__(self, p: Plan, budget: Budget) -> None:
        self.results: dict[str, Cached] = dict(p.cached)
        self.total = len({t.key for t in p.tasks})
        self.hits = len(p.cached)
        self.calls = self.tokens_in = self.tokens_out = 0
        self.budget = budget
        self.stop = threading.Event()
        self.failure: str | None = None
        self.over_budget = False
        self.lock = threading.Lock()

    def snapshot(self) -> Snapshot:
        with self.lock:
            cost = None if self.budget.price is None else self.budget.spent
            done = len(self.results)
            return Snapshot(done, self.total, self.calls, self.hits, self.tokens_in, self.tokens_out, cost)

    def fail(self, message: str) -> None:
        with self.lock:
            self.failure = self.failure or message
        self.stop.set()


def _work(task: Task, prompt: Prompt, completer: Completer, cache: VerdictCache, call: CallKey, st: _State) -> None:
    if st.stop.is_set():
        return
    amount = st.budget.estimate(task.text, prompt.max_tokens)
    if not st.budget.reserve(amount):
        st.over_budget = True
        st.stop.set()
        return
    try:
        done = completer.complete(task.text, prompt.max_tokens, prompt.response_format)
        value = Cached(done.text, done.tokens_in, done.tokens_out)
        cache.put(task.key, call, task.repeat, value)
    except (JudgeError, CacheError) as exc:
        st.budget.release(amount)
        st.fail(str(exc))
        return
    st.budget.settle(amount, value.tokens_in, value.tokens_out)
    with st.lock:
        st.results[task.key] = value
        st.calls += 1
        st.tokens_in += value.tokens_in
        st.tokens_out += value.tokens_out


def run(
    p: Plan,
    prompt: Prompt,
    completer: Completer,
    cache: VerdictCache,
    call: CallKey,
    *,
    concurrency: int,
    budget: Budget,
    progress: Progress,
) -> tuple[dict[str, Cached], Snapshot]:
    """Make the plan's missing calls; every response by key and the final counters. :class:`RunStoppedError`."""
    st = _State(p, budget)
    if p.missing:
        progress.update(st.snapshot(), final=True)

    def one(task: Task) -> None:
        _work(task, prompt, completer, cache, call, st)
        progress.update(st.snapshot())

    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="judge") as pool:
        try:
            list(pool.map(one, p.missing))
        except KeyboardInterrupt:
            st.fail("judging was interrupted")  # queued calls return at once; calls under way finish and are stored
    final = st.snapshot()
    progress.update(final, final=True)
    left = final.total - final.done
    if st.failure is not None:
        done = f"{final.done} of {final.total} verdicts are done and cached"
        raise RunStoppedError(f"{st.failure}; {done}, rerun to resume")
    if st.over_budget or left:
        raise RunStoppedError(
            f"stopped before exceeding --max-cost {money(budget.limit)} (spent {money(budget.spent)}): "
            f"{final.done} of {final.total} verdicts are done and cached, a rerun with a higher cap finishes the rest"
        )
    return st.results, final
