"""Fixtures: real services (SQLite in a temporary state directory) with a tap on the bus."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from clawline.config import Settings
from clawline.events import Event
from clawline.services import Services
from clawline.testing import FakeClock


async def _open(path: Path, clock: FakeClock | None = None) -> Services:
    settings = Settings(state_dir=path)
    return Services.open(settings, clock=clock) if clock else Services.open(settings)


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[Services]:
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
async def faked(tmp_path: Path, clock: FakeClock) -> AsyncIterator[Services]:
    """Services whose clock only moves when the test says so."""
    opened = await _open(tmp_path, clock)
    try:
        yield opened
    finally:
        await opened.runs.shutdown()
        opened.close()


@pytest.fixture
def events(services: Services) -> list[Event]:
    seen: list[Event] = []
    services.bus.tap(seen.append)
    return seen
