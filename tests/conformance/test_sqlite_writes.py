"""What the SQLite store's writes send to SQLite: only the columns that changed, no statement
for an update that changes nothing, a touch without reading a row it knows (and a fresh read
when another connection changed it), a transcript opened with its first event.

These are the statement savings behind ``bench/agents.py``; each test here fails if the saving
is lost or if it ever writes or reads the wrong thing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from clawline.records.collab import SubagentRun
from clawline.records.task import TaskRecord
from clawline.sessions.catalog import Change, SessionCatalog
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing import FakeClock

MAIN = "agent:main:main"
CHILD = "agent:main:subagent:c1"


class Statements:
    """The statements a connection runs (its trace callback), ``BEGIN``/``COMMIT`` aside."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def __call__(self, sql: str) -> None:
        head = sql.lstrip()[:8].upper()
        if not head.startswith(("BEGIN", "COMMIT", "ROLLBACK", "--")):
            self.log.append(" ".join(sql.split()))

    def starting(self, prefix: str) -> list[str]:
        return [sql for sql in self.log if sql.startswith(prefix)]


@pytest.fixture
def sqlite(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "state.db")
    yield store
    store.close()


@pytest.fixture
def traced(sqlite: SQLiteStore) -> Iterator[Statements]:
    statements = Statements()
    yield statements
    sqlite.trace(None)


def _seed(store: SQLiteStore) -> None:
    catalog = SessionCatalog(store, clock=FakeClock())
    catalog.patch(MAIN, {})
    catalog.patch(CHILD, {"spawnedBy": MAIN})
    with store.transaction() as tx:
        tx.runs.insert(SubagentRun("r1", CHILD, MAIN, "work", 1, task_id="t1"))
        tx.tasks.insert(
            TaskRecord(
                "t1", "subagent", MAIN, MAIN, "session", "work", "running", "pending",
                "done_only", 1, child_session_key=CHILD, run_id="r1",
            )
        )  # fmt: skip


def test_an_update_writes_only_the_columns_that_changed(
    sqlite: SQLiteStore, traced: Statements
) -> None:
    _seed(sqlite)
    sqlite.trace(traced)
    with sqlite.transaction() as tx:
        task = tx.tasks.get("t1")
        run = tx.runs.get("r1")
        entry = tx.get(CHILD)
        assert task is not None
        assert run is not None
        assert entry is not None
        tx.tasks.update(replace(task, status="succeeded", ended_at=9))
        tx.runs.update(replace(run, ended_at=9, outcome={"status": "ok"}))
        tx.update(replace(entry, status="done", ended_at=9))
    sqlite.trace(None)

    (tasks,) = traced.starting("UPDATE tasks")
    assert tasks.startswith("UPDATE tasks SET status = 'succeeded', ended_at = 9 WHERE"), tasks
    (runs,) = traced.starting("UPDATE subagent_runs")
    assert runs.startswith("UPDATE subagent_runs SET ended_at = 9, outcome = "), runs
    assert "task = " not in runs
    assert "requester_session_key" not in runs
    (sessions,) = traced.starting("UPDATE sessions")
    assert sessions.startswith("UPDATE sessions SET status = 'done', ended_at = 9, revision = ")
    # and what was written is the whole new record
    task_now, run_now, entry_now = sqlite.tasks.get("t1"), sqlite.runs.get("r1"), sqlite.get(CHILD)
    assert task_now == replace(task, status="succeeded", ended_at=9)
    assert run_now == replace(run, ended_at=9, outcome={"status": "ok"})
    assert entry_now == replace(entry, status="done", ended_at=9)


def test_an_update_that_changes_nothing_runs_no_statement(
    sqlite: SQLiteStore, traced: Statements
) -> None:
    _seed(sqlite)
    sqlite.trace(traced)
    with sqlite.transaction() as tx:
        task, run, entry = tx.tasks.get("t1"), tx.runs.get("r1"), tx.get(CHILD)
        assert task is not None
        assert run is not None
        assert entry is not None
        tx.tasks.update(task)
        tx.runs.update(run)
        tx.update(entry)
    sqlite.trace(None)
    assert [sql for sql in traced.log if sql.startswith("UPDATE")] == []


def test_an_update_after_another_write_of_the_row_writes_every_column(
    sqlite: SQLiteStore, traced: Statements
) -> None:
    _seed(sqlite)
    sqlite.trace(traced)
    with sqlite.transaction() as tx:
        task = tx.tasks.get("t1")
        assert task is not None
        tx.tasks.set_delivery_many(["t1"], "delivered")
        # the row changed behind the record this transaction knew: it writes what it is given
        tx.tasks.update(replace(task, status="succeeded"))
    sqlite.trace(None)
    (update,) = list(traced.starting("UPDATE tasks SET runtime"))
    assert "delivery_status = 'pending'" in update
    assert sqlite.tasks.get("t1") == replace(task, status="succeeded")


def test_an_append_touches_a_row_this_store_wrote_without_reading_it(
    sqlite: SQLiteStore, traced: Statements
) -> None:
    clock = FakeClock()
    catalog = SessionCatalog(sqlite, clock=clock)
    catalog.patch(MAIN, {"label": "main"})
    clock.advance(5)
    sqlite.trace(traced)
    catalog.append(MAIN, "message", {"role": "user", "content": "hi"})
    sqlite.trace(None)
    assert traced.starting("SELECT") == []
    (touch,) = traced.starting("UPDATE sessions")
    assert " AND revision = " in touch
    entry = sqlite.get(MAIN)
    assert entry is not None
    assert entry.updated_at == clock.now_ms()
    assert entry.label == "main"


def test_a_touch_reads_the_row_again_when_another_connection_changed_it(
    sqlite: SQLiteStore, tmp_path: Path
) -> None:
    clock = FakeClock()
    catalog = SessionCatalog(sqlite, clock=clock)
    catalog.patch(MAIN, {"label": "before"})
    other = SQLiteStore(tmp_path / "state.db")
    try:
        SessionCatalog(other, clock=clock).patch(MAIN, {"label": "after"}, touch=False)
    finally:
        other.close()
    clock.advance(5)
    heard: list[Change] = []
    catalog.on_change(heard.append)
    catalog.append(MAIN, "message", {"role": "user", "content": "hi"})
    entry = sqlite.get(MAIN)
    assert entry is not None
    assert entry.label == "after"
    assert entry.updated_at == clock.now_ms()
    (change,) = heard
    assert change.before is not None
    assert change.before.label == "after"
    assert change.after == entry


def test_a_transcript_opened_in_a_transaction_is_written_with_or_without_an_event(
    sqlite: SQLiteStore, traced: Statements
) -> None:
    sqlite.trace(traced)
    with sqlite.transaction() as tx:
        tx.open_transcript("s-empty", MAIN, 1)
    with sqlite.transaction() as tx:
        tx.open_transcript("s-used", CHILD, 2)
        first = tx.append_event("s-used", 3, "message", {"role": "user", "content": "a"})
        second = tx.append_event("s-used", 4, "message", {"role": "user", "content": "b"})
    sqlite.trace(None)
    assert (first.seq, second.seq) == (1, 2)
    # the first event opened the transcript in the statement that numbered it
    assert len(traced.starting("INSERT INTO transcripts")) == 2
    assert traced.starting("UPDATE transcripts") == [traced.log[-2]]
    empty, used = sqlite.transcript_info("s-empty"), sqlite.transcript_info("s-used")
    assert empty is not None
    assert (empty.session_key, empty.last_seq) == (MAIN, 0)
    assert used is not None
    assert (used.session_key, used.last_seq) == (CHILD, 2)
    assert [event.seq for event in sqlite.events("s-used")] == [1, 2]
