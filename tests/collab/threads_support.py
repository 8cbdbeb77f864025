"""Helpers for the thread binding tests: requesters on each kind of channel and configs."""

from __future__ import annotations

from typing import Any

from clawline.channels.thread_bindings.planner import ThreadPlanner
from clawline.runtime import Runtime
from clawline.types import JSON

__all__ = ["CHILD", "REQUESTER", "channel_config", "make_requester", "planner"]

REQUESTER = "agent:main:main"
CHILD = "agent:main:subagent:00000000-0000-4000-8000-000000000001"


def make_requester(services: Runtime, key: str = REQUESTER, **extra: JSON) -> str:
    """Create the requester session with the given extra fields (``deliveryContext``, …)."""
    change = services.catalog.patch(key, dict(extra))
    return change.key


def planner(services: Runtime) -> ThreadPlanner:
    """A thread planner over the runtime's parts and its ``threadBindings`` settings (as the
    spawn tool's)."""
    return ThreadPlanner(
        catalog=services.catalog,
        store=services.store,
        workers=services.workers,
        channels=services.channels,
        config=services.agents_config.thread_bindings,
    )


def channel_config(
    channel: str,
    *,
    session: dict[str, Any] | None = None,
    channel_level: dict[str, Any] | None = None,
    accounts: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A config mapping with thread binding tables at the given levels."""
    raw: dict[str, Any] = {}
    if session is not None:
        raw["session"] = {"threadBindings": session}
    section: dict[str, Any] = {}
    if channel_level is not None:
        section["threadBindings"] = channel_level
    if accounts is not None:
        section["accounts"] = {name: {"threadBindings": table} for name, table in accounts.items()}
    if section:
        raw["channels"] = {channel: section}
    return raw
