"""Large result files of known layouts, decoded without the bulky per-question fields no importer reads.

Some harnesses store everything the memory system returned next to each answer: mem0-eval's
per-conversation files (mflow-benchmarks) keep both speakers' retrieved memories, cognitive-memory-benchmarks
keeps the retrieved texts and a trace. That is three quarters of their bytes, and building those values
as Python objects (then freeing them) costs more than everything else the load does with the files. A
typed decoder (msgspec) that knows the layout's keys steps over those values without building them.

The result equals the ordinary parse with the bulky keys removed from every item (dict key order aside):
a document is decoded this way only when all its top-level keys and all its items' keys are among the
layout's declared keys, and every kept value is read as plain JSON. Anything else (another key, another
structure, a number msgspec does not read, invalid JSON) and :func:`decode` returns None: the caller
parses the file as usual, and reports any error the usual way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec
import orjson

MIN_BYTES: Final = 1 << 20
"""Smaller files are parsed whole: the saving would not repay a failed attempt."""
MARKER_WINDOW: Final = 64 * 1024
"""A layout is tried only when one of its bulky keys appears this early in the file (its first item)."""


@dataclass(frozen=True)
class Layout:
    """One known layout: an object whose ``items`` key holds the per-question objects."""

    format: str
    """The importer's format name (for messages and tests)."""
    top_keys: tuple[str, ...]
    """Every top-level key the layout may have (the items key among them)."""
    items: str
    """The key of the per-question list."""
    item_keys: tuple[str, ...]
    """Every per-question key the layout may have and the importers may read (kept)."""
    bulky: tuple[str, ...]
    """Per-question keys that are left out: no importer or sniffer reads them."""

    def __post_init__(self) -> None:
        if self.items not in self.top_keys or set(self.bulky) & set(self.item_keys):
            raise ValueError(f"{self.format}: items key must be a top-level key, and bulky keys not kept ones")


class _Decoder:
    """A layout's typed decoder, built on first use."""

    def __init__(self, layout: Layout) -> None:
        self.markers = tuple(f'"{key}"'.encode() for key in layout.bulky)
        item = msgspec.defstruct(
            f"{layout.format}_item",
            [(k, Any, msgspec.UNSET) for k in layout.item_keys]
            + [(k, msgspec.Raw, msgspec.UNSET) for k in layout.bulky],  # checked as JSON, never built
            forbid_unknown_fields=True,
        )
        self.top_keys = frozenset(layout.top_keys)
        # A dict, not a struct, at the top: it keeps the file's key order (a sniffer reads the first value).
        # Its only list type is the items' (a top-level key with another list falls back to the full parse).
        top = dict[str, list[item] | dict[str, Any] | str | int | float | bool | None]  # type: ignore[valid-type]
        self.decoder = msgspec.json.Decoder(top)


_DECODERS: dict[Layout, _Decoder] = {}


def valid_utf8(raw: bytes) -> bool:
    """Whether ``raw`` is UTF-8 throughout: msgspec does not look inside the values it steps over, orjson does."""
    if raw.isascii():  # most result files: JSON writers escape everything else by default
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _raw_to_none(value: Any) -> None:
    return None  # only Raw values (the bulky fields) reach this hook; their keys are removed right after


def decode(raw: bytes, layouts: Sequence[Layout]) -> Any | None:
    """``raw`` (a JSON document without BOM) parsed without the bulky keys of the first layout it fits, else None."""
    if len(raw) < MIN_BYTES:
        return None
    head = raw[:MARKER_WINDOW]
    for layout in layouts:
        dec = _DECODERS.get(layout)
        if dec is None:
            dec = _DECODERS[layout] = _Decoder(layout)
        if not any(marker in head for marker in dec.markers):
            continue
        if not valid_utf8(raw):
            return None
        try:
            doc = dec.decoder.decode(raw)
        except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
            continue
        # Only the declared keys, and lists of items only under the items key (the others could hold any value).
        if not doc.keys() <= dec.top_keys or any(
            (key == layout.items) != (value.__class__ is list) for key, value in doc.items()
        ):
            continue
        data: dict[str, Any] = msgspec.to_builtins(doc, enc_hook=_raw_to_none)
        for item in data.get(layout.items, ()):
            for key in layout.bulky:
                item.pop(key, None)
        try:
            # orjson reads integers beyond 64 bits as floats, msgspec as integers; orjson writes none of them.
            orjson.dumps(data)
        except orjson.JSONEncodeError:
            return None
        return data
    return None
