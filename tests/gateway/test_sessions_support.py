"""Helpers for the ``sessions.*`` gateway tests (this module holds no tests itself)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from clawline.sessions.catalog import SessionCatalog
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

__all__ = [
    "MAIN",
    "Opener",
    "connected",
    "error_of",
    "quiet",
    "seed",
    "sub_key",
]

MAIN = "agent:main:main"
Opener = Callable[..., Awaitable[WireClient]]


def sub_key(n: int, agent: str = "main") -> str:
    return f"agent:{agent}:subagent:{n:08d}-0000-4000-8000-000000000000"


async def connected(wire: Opener, **kwargs: Any) -> WireClient:
    """A connected client (admin unless ``scopes`` says otherwise)."""
    client = await wire()
    frame = await client.connect(token=TOKEN, **kwargs)
    assert frame["ok"] is True, frame
    return client


async def error_of(client: WireClient, method: str, params: Any = None) -> dict[str, Any]:
    """Call and return the error object; fail the test on success."""
    frame = await client.call(method, params)
    assert frame["ok"] is False, frame
    error: dict[str, Any] = frame["error"]
    return error


def seed(catalog: SessionCatalog, key: str, **changes: object) -> None:
    """Create or patch a session directly through the catalog (test setup only)."""
    catalog.patch(key, changes)


async def quiet(client: WireClient, name: str, *, settle: float = 0.2) -> list[dict[str, Any]]:
    """Wait until a round trip has passed and ``settle`` seconds more, then return the
    events named ``name`` collected so far."""
    await client.ok("health")
    await asyncio.sleep(settle)
    return client.events_named(name)
