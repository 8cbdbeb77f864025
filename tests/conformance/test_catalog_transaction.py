"""Several catalog writes in one transaction: all or nothing, listeners after the commit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from clawline.errors import LabelInUse
from clawline.events import DomainEvent, DomainEvents, MessageAppended, SessionChanged
from clawline.sessions.catalog import Cause, Change, SessionCatalog
from clawline.store.base import Store

if TYPE_CHECKING:
    from clawline.testing import FakeClock

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


def test_after_commit_runs_once_committed_and_never_after_a_rollback(
    catalog: SessionCatalog, store: Store
) -> None:
    ran: list[tuple[str, bool]] = []
    with catalog.transaction() as work:
        work.tx.after_commit(lambda: ran.append(("first", store.get(MAIN) is not None)))
        work.tx.after_commit(lambda: ran.append(("second", True)))
        work.patch(MAIN, {"label": "home"})
        assert ran == []
    assert ran == [("first", True), ("second", True)]  # in order, the write already visible
    ran.clear()

    def abandoned() -> None:
        with store.transaction() as tx:
            tx.after_commit(lambda: ran.append(("rolled back", True)))
            raise RuntimeError("abandon")

    with pytest.raises(RuntimeError, match="abandon"):
        abandoned()
    assert ran == []


def test_the_catalog_publishes_its_events_after_the_commit(store: Store, clock: FakeClock) -> None:
    events = DomainEvents()
    heard: list[DomainEvent] = []
    events.subscribe(heard.append)
    catalog = SessionCatalog(store, clock=clock, events=events)
    with catalog.transaction() as work:
        work.patch(MAIN, {"label": "home"}, cause=Cause("create"))
        work.patch(CHILD, {"spawnedBy": MAIN, "spawnDepth": 1})  # no cause: not told
        work.append(CHILD, "message", {"role": "user", "content": "task"}, run_id="r1")
        assert heard == []
    changed, appended = heard
    assert isinstance(changed, SessionChanged)
    assert (changed.session_key, changed.reason, changed.entry) == (MAIN, "create", store.get(MAIN))
    assert isinstance(appended, MessageAppended)
    assert (appended.session_key, appended.run_id, appended.event.seq) == (CHILD, "r1", 1)
    assert appended.entry == store.get(CHILD)
    heard.clear()

    def refused() -> None:
        with catalog.transaction() as work:
            work.patch(CHILD, {"label": "other"}, cause=Cause("patch"))
            work.patch("agent:main:x", {"label": "home"}, cause=Cause("patch"))

    with pytest.raises(LabelInUse):
        refused()
    assert heard == []  # the transaction rolled back: nothing is told
    deleted = catalog.delete(CHILD, cause=Cause("delete"))
    [gone] = heard
    assert isinstance(gone, SessionChanged)
    assert (gone.reason, gone.entry, gone.deleted) == ("delete", None, deleted.before)
