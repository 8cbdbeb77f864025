"""Several catalog writes in one transaction: all or nothing, listeners after the commit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from clawline.errors import LabelInUse
from clawline.sessions.catalog import Change, SessionCatalog
from clawline.store.base import Store

if TYPE_CHECKING:
    from .conftest import Backend

MAIN = "agent:main:main"
CHILD = "agent:main:subagent:t1"


def test_writes_commit_together_and_listeners_hear_after(
    catalog: SessionCatalog, store: Store
) -> None:
    heard: list[tuple[str, bool]] = []

    def listener(change: Change) -> None:
        # Called after the commit: the store already shows the change.
        heard.append((change.key, store.get(change.key) is not None))

    catalog.on_change(listener)
    with catalog.transaction() as work:
        work.patch(MAIN, {"label": "home"})
        work.patch(CHILD, {"spawnedBy": MAIN, "spawnDepth": 1})
        event = work.append(CHILD, "message", {"role": "user", "content": "task"})
        assert heard == []
    assert event.seq == 1
    assert heard == [(MAIN, True), (CHILD, True)]  # the clock stood still: append touched nothing
    child = store.get(CHILD)
    assert child is not None
    assert child.lineage_path == (MAIN, CHILD)


def test_a_failure_writes_nothing(catalog: SessionCatalog, backend: Backend) -> None:
    catalog.patch(MAIN, {"label": "taken"})
    before = backend.dump()
    heard: list[Change] = []
    catalog.on_change(heard.append)

    def write_three() -> None:
        with catalog.transaction() as work:
            work.patch(CHILD, {"spawnedBy": MAIN})
            work.append(CHILD, "message", {"role": "user", "content": "x"})
            work.patch("agent:main:other", {"label": "taken"})

    with pytest.raises(LabelInUse):
        write_three()
    assert backend.dump() == before
    assert heard == []
