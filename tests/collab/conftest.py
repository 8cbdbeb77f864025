"""Fixtures: real services (SQLite in a temporary state directory) whose runs are answered by a
:class:`~tests.collab.support.ScriptedRunner` (or, with ``scripted=False``, by the real turn loop
and its offline model), built from a config mapping."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeAlias

import pytest

from clawline.channels.registry import ChannelRegistry
from clawline.clock import Clock
from clawline.config import Settings
from clawline.runtime import Runtime
from tests.collab.support import ScriptedRunner

MakeServices: TypeAlias = Callable[..., Awaitable[Runtime]]


@pytest.fixture
async def make_services(tmp_path: Path) -> AsyncIterator[MakeServices]:
    opened: list[Runtime] = []

    async def make(
        raw: dict[str, Any] | None = None,
        clock: Clock | None = None,
        *,
        scripted: bool = True,
        channels: ChannelRegistry | None = None,
    ) -> Runtime:
        """``channels``: the runtime's channel registry instead of the plugins' adapters."""
        state = tmp_path / f"state{len(opened)}"
        state.mkdir()
        settings = Settings(state_dir=state, raw=raw or {})
        if clock is None:
            services = Runtime.open(settings, channels=channels)
        else:
            services = Runtime.open(settings, clock=clock, channels=channels)
        if scripted:
            services.runs.runner = ScriptedRunner()
        opened.append(services)
        return services

    yield make
    for services in opened:
        # Bounded, so that a failed test whose work waits on a fake clock reports its failure
        # instead of hanging here.
        await asyncio.wait_for(services.stop(), 5)  # a started runtime's passes, runs, ...
        await asyncio.wait_for(services.runs.shutdown(), 5)
        services.close()


@pytest.fixture
async def services(make_services: MakeServices) -> Runtime:
    return await make_services()
