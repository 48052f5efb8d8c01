"""Per-question data that stays packed after unpickling until something reads it.

A warm start unpickles every run from the cache, and most pages show only run-level numbers. A run's
questions (:attr:`memeval_core.qa.models.QaRun.questions`) and its per-question scores
(:attr:`memeval_core.qa.scoring.RunScore.questions`) are tens of thousands of objects, so each travels
through pickle as one opaque :class:`Packed` blob held in a slot of its owner; everything else of the
owner is restored at once. The first read of ``questions`` unpacks the blob (once, under the pack's
lock, whatever the number of threads), stores the real list or tuple on the owner and drops the pack:
from then on the owner is an ordinary object. Values are identical to the ones pickled.

Unpacking builds the objects from their attribute dicts with C-level ``map`` calls (no Python code per
object): see :func:`build_objects`.
"""

from __future__ import annotations

import gc
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import repeat
from typing import Any, Final, TypeVar

T = TypeVar("T")

QUESTIONS: Final = "questions"
"""The attribute that is packed, on both owners."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """Suspend the cyclic garbage collector for a block that builds many long-lived objects.

    Parsed JSON and one record per question are hundreds of thousands of container objects, none of
    them garbage: each automatic full collection would traverse all of them (about a third of a cold
    load). Reference counting still frees everything as usual; the collector resumes afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not gc.get_freeze_count():
                # Everything allocated meanwhile still counts as young: the first allocation after
                # gc.enable() would traverse all of it (tens of ms after a load). Moving it to the oldest
                # generation leaves it to the next full collection, as survivors of the young ones would
                # be anyway. (Skipped when the host froze objects itself: unfreeze would thaw them too.)
                gc.freeze()
                gc.unfreeze()
            gc.enable()


class Packed:
    """One owner's packed per-question data: the pickled blob, what it summarises, and the unpack lock."""

    __slots__ = ("blob", "info", "lock")

    def __init__(self, blob: bytes, info: tuple[Any, ...] = ()) -> None:
        self.blob = blob
        """Pickled per-question data, in the owner's own layout."""
        self.info = info
        """Facts about the packed data that callers may ask without unpacking (owner-specific)."""
        self.lock = threading.Lock()
        """Held while unpacking, so that concurrent first reads unpack once and see the same object."""


def packed_of(owner: object, slot: Any) -> Packed | None:
    """The owner's pack, or None when its questions are real (never packed, or already unpacked)."""
    try:
        pack = slot.__get__(owner, type(owner))
    except AttributeError:
        return None
    return pack if isinstance(pack, Packed) else None


def unpack(owner: Any, slot: Any, load: Callable[[bytes], Any], first: bool = False) -> Any:
    """The owner's ``questions``: unpacked from its pack on the first call (thread-safe), then stored.

    ``first``: ``questions`` is the first key of the owner's ``__dict__`` (else the last), as it was when
    pickled. Raises AttributeError when the owner has neither questions nor a pack (a broken object).
    """
    pack = packed_of(owner, slot)
    if pack is None:
        # Never packed, or another thread unpacked it between our attribute miss and now.
        d = owner.__dict__
        if QUESTIONS in d:
            return d[QUESTIONS]
        raise AttributeError(f"{type(owner).__name__!r} object has no attribute {QUESTIONS!r}")
    with pack.lock:
        d = owner.__dict__
        if QUESTIONS not in d:
            with gc_paused():
                value = load(pack.blob)
            if first:
                # A new dict swapped in whole: a reader of the old one still sees a consistent object.
                object.__setattr__(owner, "__dict__", {QUESTIONS: value, **d})
            else:
                d[QUESTIONS] = value
            slot.__set__(owner, None)
    return owner.__dict__[QUESTIONS]


def build_objects(cls: type[T], dicts: list[dict[str, Any]], *slots: tuple[str, Iterable[Any]]) -> list[T]:
    """``len(dicts)`` new instances of ``cls`` (``__init__`` not called) with these ``__dict__`` values.

    ``slots``: further ``(attribute, values)`` pairs, one value per object, set with ``object.__setattr__``.
    Every step is a ``map`` over C functions, so there is no Python code per object.
    """
    setattr_ = object.__setattr__
    objs = list(map(object.__new__, repeat(cls, len(dicts))))
    deque(map(setattr_, objs, repeat("__dict__"), dicts), 0)
    for name, values in slots:
        deque(map(setattr_, objs, repeat(name), values), 0)
    return objs
