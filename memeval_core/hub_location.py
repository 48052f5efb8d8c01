"""Where results live when they live on the Hugging Face Hub: ``hf://datasets/OWNER/NAME[@REVISION]``.

Kept apart from :mod:`memeval_core.hub_results` so that reading the setting costs no ``huggingface_hub`` import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memeval_core.errors import SnapshotError

_URL = re.compile(
    r"hf://datasets/(?P<repo>[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*)(?:@(?P<rev>[A-Za-z0-9._/-]+))?"
)


class HubResultsError(SnapshotError):
    """A Hub results root could not be read or written; the message is one sentence without the token."""


@dataclass(frozen=True)
class HubLocation:
    """A results root on the Hub: a dataset and, optionally, a revision (branch, tag or commit id)."""

    repo_id: str
    """``owner/name``."""
    revision: str | None = None
    """Branch, tag or commit id; None for the default branch."""

    def __str__(self) -> str:
        return f"hf://datasets/{self.repo_id}" + (f"@{self.revision}" if self.revision else "")


def parse_location(text: str) -> HubLocation | None:
    """The location ``text`` names when it starts with ``hf://``, else None.

    ``HubResultsError`` for an ``hf://`` text that is not exactly ``hf://datasets/OWNER/NAME[@REVISION]``: a
    user name or token in the URL, a query, a model or Space, ``..`` in the revision.
    """
    if not text.startswith("hf://"):
        return None
    m = _URL.fullmatch(text)
    if m is None or ".." in (m["rev"] or ""):
        # The text is not repeated: it may hold a token someone pasted into it.
        raise HubResultsError(
            "the results location starts with hf:// but is not a results dataset: write hf://datasets/OWNER/NAME or "
            "hf://datasets/OWNER/NAME@REVISION (credentials come from HF_TOKEN, never from the URL)"
        )
    return HubLocation(m["repo"], m["rev"])
