"""Fixtures: a real runtime (SQLite in a temporary state directory) and the frames a gateway
would send for it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from clawline.config import Settings
from clawline.runtime import Runtime
from clawline.testing import FakeClock
from clawline.testing.wire import WireRecorder


async def _open(path: Path, clock: FakeClock | None = None) -> Runtime:
    settings = Settings(state_dir=path)
    return Runtime.open(settings, clock=clock) if clock else Runtime.open(settings)


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[Runtime]:
    opened = await _open(tmp_path)
    try:
        yield opened
    finally:
        await opened.runs.shutdown()
        opened.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def faked(tmp_path: Path, clock: FakeClock) -> AsyncIterator[Runtime]:
    """A runtime whose clock only moves when the test says so."""
    opened = await _open(tmp_path, clock)
    try:
        yield opened
    finally:
        await opened.runs.shutdown()
        opened.close()


@pytest.fixture
async def events(services: Runtime) -> AsyncIterator[WireRecorder]:
    """The frames a gateway would send for ``services`` (``await events.settled()`` before
    looking at them)."""
    async with WireRecorder(services) as recorder:
        yield recorder
