"""A task registry and a session catalog over one SQLite store, with a fake clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clawline.sessions.catalog import SessionCatalog
from clawline.store.sqlite.store import SQLiteStore
from clawline.tasks.registry import TaskRegistry
from clawline.testing import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "tasks.db")
    yield opened
    opened.close()


@pytest.fixture
def registry(store: SQLiteStore, clock: FakeClock) -> TaskRegistry:
    return TaskRegistry(store, clock=clock)


@pytest.fixture
def catalog(store: SQLiteStore, clock: FakeClock) -> SessionCatalog:
    return SessionCatalog(store, clock=clock)
