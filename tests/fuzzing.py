"""Hypothesis building blocks shared by the fuzz tests: how real files get broken."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

WEIRD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.sampled_from(["\ud83d", "a\udfffb"]),
)
"""Values of the wrong type, NaN/inf, huge and negative numbers, half a surrogate pair (JSON allows the escape;
it is no text)."""

KINDS = ("replace", "delete", "add", "truncate", "bytes", "nest", "empty", "none")


def json_paths(doc: Any, prefix: tuple[Any, ...] = (), max_keys: int = 12, max_items: int = 3) -> list[tuple[Any, ...]]:
    """Paths to values in ``doc`` (the first few keys/items of each container), the root first."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in list(doc.items())[:max_keys]:
            out += json_paths(v, (*prefix, k), max_keys, max_items)
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:max_items]):
            out += json_paths(v, (*prefix, i), max_keys, max_items)
    return out


def broken_bytes(draw: st.DrawFn, sample: Any) -> bytes:
    """``sample`` broken one way: a value retyped, dropped or added, truncated, stray bytes, deep nesting, emptied."""
    doc = json.loads(json.dumps(sample))
    kind = draw(st.sampled_from(KINDS))
    paths = json_paths(doc)[1:]
    if kind in ("replace", "delete", "add") and paths:
        path = draw(st.sampled_from(paths))
        parent = doc
        for p in path[:-1]:
            parent = parent[p]
        if kind == "replace":
            parent[path[-1]] = draw(WEIRD)
        elif kind == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(WEIRD)
    data = json.dumps(doc, allow_nan=True).encode()
    if kind == "nest":
        depth = draw(st.integers(min_value=1, max_value=5000))
        data = b"[" * depth + data + b"]" * depth
    elif kind == "truncate":
        data = data[: draw(st.integers(min_value=0, max_value=max(len(data) - 1, 0)))]
    elif kind == "bytes":
        at = draw(st.integers(min_value=0, max_value=len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    elif kind == "empty":
        data = draw(st.sampled_from([b"", b"   \n", b"\xef\xbb\xbf"]))
    return data
