"""Prices per model and the estimates ``--dry-run`` and ``--max-cost`` rely on.

Prices are US dollars per million tokens, input and output. :data:`PRICES` holds list prices of common
OpenAI judge models; a JSON file ``{"model": {"input": USD, "output": USD}, ...}`` (``--prices FILE``)
adds or overrides entries. A model that no entry names has no known price: its cost is shown as unknown
and ``--max-cost`` refuses to run (a local server costs nothing: give it ``{"input": 0, "output": 0}``).
A dated snapshot (``gpt-4o-mini-2024-07-18``) takes the price of its base name.

Estimates: input tokens are ``ceil(characters / 4) + 8`` (the chat template's overhead), output tokens
are the prompt's ``max_tokens``; both are upper-leaning, so a cap based on them stops early, not late.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson


class PriceError(ValueError):
    """A price file that cannot be used; the message is one sentence."""


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    """Per million prompt tokens."""
    output: float
    """Per million completion tokens."""

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """Dollars for one call."""
        return (tokens_in * self.input + tokens_out * self.output) / 1_000_000


PRICES: dict[str, Price] = {
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-5": Price(1.25, 10.00),
    "gpt-5-mini": Price(0.25, 2.00),
    "gpt-5-nano": Price(0.05, 0.40),
    "o4-mini": Price(1.10, 4.40),
    "gpt-3.5-turbo": Price(0.50, 1.50),
}
"""List prices of OpenAI models often used as judges (USD per 1M tokens); override with ``--prices FILE``."""

_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def load_prices(path: Path | None) -> dict[str, Price]:
    """:data:`PRICES` updated with the entries of a price file; :class:`PriceError` for a bad file."""
    table = dict(PRICES)
    if path is None:
        return table
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise PriceError(f"price file {path} cannot be read as JSON ({type(exc).__name__})") from None
    if not isinstance(doc, dict):
        raise PriceError(f"price file {path} must be an object mapping model names to prices")
    for model, entry in doc.items():
        ok = isinstance(entry, dict) and all(
            isinstance(entry.get(k), int | float) and not isinstance(entry.get(k), bool) and entry[k] >= 0
            for k in ("input", "output")
        )
        if not ok:
            raise PriceError(f"price file {path}: {model!r} needs non-negative numbers 'input' and 'output'")
        table[str(model)] = Price(float(entry["input"]), float(entry["output"]))
    return table


def price_of(model: str, table: Mapping[str, Price]) -> Price | None:
    """The model's price, or its undated base name's; None when unknown."""
    return table.get(model) or table.get(_SNAPSHOT.sub("", model))


def estimate_tokens(text: str) -> int:
    """Upper-leaning estimate of a chat prompt's input tokens (no tokenizer needed)."""
    return math.ceil(len(text) / 4) + 8


def money(usd: float | None) -> str:
    """``$0.0123``; ``$?`` when the price is unknown."""
    return "$?" if usd is None else f"${usd:,.4f}"
