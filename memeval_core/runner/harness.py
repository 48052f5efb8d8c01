"""The harness's adapter: seeding, ``searchText`` over HTTP, session ingest and alias updates.

Mirrors ``BaseAdapter.seed`` / ``searchText`` (baseAdapter.ts) and ``UniversalSessionAdapter`` (its session
metadata, ``ingestBelief``, ``updateBeliefAliases``) of tenurehq/precisionMemBench.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memeval_core.runner.client import WrapperClient, WrapperError, snippet
from memeval_core.runner.config import ProviderConfig
from memeval_core.runner.context import Belief, SeedIndex, belief_to_text, map_results
from memeval_core.runner.numbers import js_round


def seed_metadata(belief: Belief, session: bool) -> dict[str, Any]:
    """``seedMetadata``: the single-turn adapter sends the first scope, the session adapter more fields."""
    if not session:
        scope = belief.get("scope") or []
        return {"beliefId": belief["_id"], "scope": scope[0] if scope else None}
    return {
        "beliefId": belief["_id"],
        "scope": belief.get("scope"),
        "type": belief.get("type"),
        "pinned": belief.get("pinned"),
        "superseded_by": belief.get("superseded_by"),
    }


@dataclass
class Harness:
    """One provider as the harness sees it: its wrapper, its config and the seed index."""

    client: WrapperClient
    cfg: ProviderConfig
    session: bool
    """Session suite: ``UniversalSessionAdapter`` metadata."""
    drop_unknown_ids: bool = False
    """Mirror upstream exactly: ids the seed index does not know are dropped silently instead of refused."""
    index: SeedIndex = field(default_factory=SeedIndex)
    search_ms: list[float] = field(default_factory=list)
    """Wall-clock time of every ``/search`` call, for the progress bar."""
    add_ms: list[float] = field(default_factory=list)
    """Wall-clock time of every seeding ``/add`` call, for the progress bar."""

    def load_fixture(self, beliefs: list[Belief]) -> None:
        """``loadFixture``: know the beliefs without sending them (``--no-reseed``)."""
        for b in beliefs:
            self.index.add(b)

    def seed(self, beliefs: list[Belief], tick: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
        """``seed``: reset, then add each belief; the per-belief ingestion report."""
        self.client.call("DELETE", "/reset", what="reset before seeding")
        self.index = SeedIndex()
        report: list[dict[str, Any]] = []
        for i, belief in enumerate(beliefs):
            bid = str(belief["_id"])
            self.index.add(belief)
            body = {
                "text": belief_to_text(belief, self.cfg.belief_to_text),
                "user_id": belief.get("user_id"),
                "metadata": seed_metadata(belief, self.session),
                "aliases": belief.get("aliases"),
            }
            start = time.perf_counter()
            reply = self.client.call("POST", "/add", body, what=f"seeding belief {bid}")
            self.add_ms.append(reply.elapsed_ms)
            overhead = _db_overhead(reply.body)
            report.append({"beliefId": bid, "latencyMs": js_round((time.perf_counter() - start) * 1000 - overhead, 2)})
            if tick is not None:
                tick(i + 1, len(beliefs))
            if self.cfg.seed_delay_ms > 0:
                time.sleep(self.cfg.seed_delay_ms / 1000)
        if self.cfg.wait_after_seed:
            self.client.call("POST", "/wait", what="waiting for indexing after seeding")
        return report

    def ingest(self, belief: Belief, what: str) -> None:
        """``ingestBelief`` (session turns): index it, then ``/add`` it; upstream sends no ``aliases`` here
        (universalSessionAdapter.ts at 63f19c1, L17-29), unlike seeding (baseAdapter.ts L145-150)."""
        self.index.add(belief)
        body = {
            "text": belief_to_text(belief, self.cfg.belief_to_text),
            "user_id": belief.get("user_id"),
            "metadata": seed_metadata(belief, True),
        }
        self.client.call("POST", "/add", body, what=what)

    def update_aliases(self, belief_id: str, add: list[str]) -> None:
        """``updateBeliefAliases``: trimmed, lower-cased aliases appended without repeats.

        Upstream oddity, mirrored: only the harness's copy changes (universalSessionAdapter.ts at 63f19c1,
        L31-41); nothing is sent to the wrapper (no ``PUT /update`` even when ``supportsUpdate`` is set), so the
        new surface forms never reach the index.
        """
        b = self.index.beliefs.get(belief_id)
        if b is None:
            return
        b["aliases"] = list(dict.fromkeys([*(b.get("aliases") or []), *(a.strip().lower() for a in add)]))

    def searcher(self, user_id: str, what: str) -> Callable[[str, int, str | list[str] | None, set[str]], list[Belief]]:
        """``searchText`` for one user; ``what`` names the case in error messages."""

        def search(query: str, limit: int, scope: str | list[str] | None, exclude: set[str]) -> list[Belief]:
            if not query.strip():
                return []
            body: dict[str, Any] = {"query": query, "user_id": user_id, "limit": limit}
            if scope is not None:  # JSON.stringify drops an undefined scope
                body["scope"] = scope
            reply = self.client.call("POST", "/search", body, what=what)
            self.search_ms.append(reply.elapsed_ms)
            ids = result_ids(reply.body, what, f"{self.client.url}/search")
            if not self.drop_unknown_ids:
                unknown = [i for i in ids if i not in self.index.beliefs]
                if unknown:
                    raise WrapperError(
                        f"{what}: POST {self.client.url}/search returned ids the seed index does not know: "
                        f"{', '.join(map(repr, unknown[:5]))}{' …' if len(unknown) > 5 else ''} "
                        "(return each memory's metadata.beliefId as its id)"
                    )
            return map_results(self.index, ids, exclude)

        return search


def _db_overhead(body: Any) -> float:
    """``(body.db_overhead_ms as number) || 0``."""
    value = body.get("db_overhead_ms") if isinstance(body, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value else 0.0


def result_ids(body: Any, what: str, where: str) -> list[str]:
    """The ids of a ``/search`` answer: ``{results: [...]}`` or a bare list (as ``searchText`` accepts).

    Upstream treats any other shape as no results (baseAdapter.ts L308-312) and skips items without an id (L319);
    memeval refuses them, since a wrapper that answers so has a bug that would otherwise score as a system that
    found nothing. Unknown ids, which upstream drops (L323), are refused by the caller unless told otherwise.
    """
    items = body.get("results") if isinstance(body, dict) else body
    if not isinstance(items, list):
        raise WrapperError(
            f'{what}: POST {where} answered {snippet(_dump(body))}, which is neither {{"results": [...]}} nor a list'
        )
    ids: list[str] = []
    for n, item in enumerate(items):
        bid = item.get("id") if isinstance(item, dict) else None
        if not isinstance(bid, str) or not bid:
            raise WrapperError(
                f"{what}: POST {where} answered a result without a string id at results[{n}]: {snippet(_dump(item))}"
            )
        ids.append(bid)
    return ids


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
