"""The reference systems the app draws beside every run: one that returns nothing, one that returns everything."""

from __future__ import annotations

from typing import Any

from memeval_core.wrappers.server import Provider, require


class Nothing(Provider):
    """Accepts every memory and never returns one."""

    name = "nothing"


class Everything(Provider):
    """Returns every stored memory, in the order added, whatever the query, user, scope or limit.

    The harness caps what it keeps (``maxBeliefs`` less the pinned facts) and drops pinned ids, so this is the
    live counterpart of the app's simulated *returns everything* (which also ignores the cap).
    """

    name = "everything"

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}

    def reset(self) -> None:
        self.items.clear()

    def add(self, body: dict[str, Any]) -> dict[str, Any]:
        text = require(body, "text", str)
        raw = body.get("metadata")
        meta: dict[str, Any] = raw if isinstance(raw, dict) else {}
        bid = str(meta.get("beliefId") or f"mem-{len(self.items)}")
        self.items.pop(bid, None)
        self.items[bid] = {"id": bid, "memory": text, "metadata": meta}
        return {"id": bid}

    def search(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return list(self.items.values())
