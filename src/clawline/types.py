"""Type aliases shared across clawline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, TypeAlias

JSON: TypeAlias = "bool | int | float | str | Sequence[JSON] | Mapping[str, JSON] | None"
JSONObject: TypeAlias = "dict[str, JSON]"

EpochMs: TypeAlias = int
"""Milliseconds since the Unix epoch, UTC."""

SessionStatus: TypeAlias = Literal["running", "done", "failed", "killed", "timeout"]
SubagentRole: TypeAlias = Literal["orchestrator", "leaf"]
SubagentControlScope: TypeAlias = Literal["children", "none"]

TERMINAL_STATUSES: frozenset[str] = frozenset({"done", "failed", "killed", "timeout"})
