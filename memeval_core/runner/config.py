"""Provider settings, read from an upstream-style ``providers.config.json`` (baseAdapter.ts ``ProviderConfigJson``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from memeval_core.errors import IngestError, json_path

BeliefToText = Literal["canonical_name_aliases", "content"]


class ProviderConfig(BaseModel):
    """One provider's block of ``providers.config.json``; absent keys take the harness's defaults."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True)

    env_var: str = ""
    """Environment variable the harness reads the URL from (memeval takes ``--url`` instead)."""
    default_url: str = ""
    """URL the harness uses when the variable is unset (memeval's ``--url`` default when given)."""
    seed_delay_ms: int = 0
    """Pause after each ``/add`` while seeding (the harness: ``setTimeout`` after every belief)."""
    belief_to_text: BeliefToText = "canonical_name_aliases"
    """Text mode; the harness reads it but its ``beliefToText`` ignores it (see :func:`belief_to_text`)."""
    supports_update: bool = False
    """The wrapper has ``PUT /update``; the harness never calls it (alias updates stay local)."""
    wait_after_seed: bool = False
    """Call ``POST /wait`` once after seeding, before any search."""
    supports_multi_scope: bool = False
    """Send every scope of a multi-scope query in one search instead of one search per scope."""


def load_provider_config(path: Path | None, provider: str) -> ProviderConfig:
    """The block of ``provider`` in ``path``; the defaults when no file is given or it has no such block."""
    if path is None:
        return ProviderConfig()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IngestError(str(path), "$", f"cannot be read as JSON: {exc}") from None
    if not isinstance(data, dict):
        raise IngestError(str(path), "$", "must be an object of provider name -> settings")
    block = data.get(provider)
    if block is None:
        return ProviderConfig()
    try:
        return ProviderConfig.model_validate(block)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise IngestError(str(path), json_path((provider, *err["loc"])), err["msg"]) from None
