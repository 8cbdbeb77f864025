"""Fixtures for the command-line tests: a temporary state directory, a fake clock, an
in-process runner and a catalog over the same SQLite store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clawline.sessions.catalog import SessionCatalog
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing import FakeClock

from .helpers import START_MS, Cli


@pytest.fixture(autouse=True)
def _plain_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich would colour or re-wrap output if these were set."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START_MS)


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def db_path(state_dir: Path) -> Path:
    return state_dir / "clawline.db"


@pytest.fixture
def clawline(state_dir: Path, clock: FakeClock) -> Cli:
    return Cli(state_dir, clock)


@pytest.fixture
def catalog(db_path: Path, clock: FakeClock) -> Iterator[SessionCatalog]:
    """A catalog over the store the CLI uses, for seeding and checking."""
    store = SQLiteStore(db_path)
    yield SessionCatalog(store, clock=clock)
    store.close()
