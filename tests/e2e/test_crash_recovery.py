"""A gateway killed (SIGKILL) with hundreds of sub-agent runs in flight loses no completion and
delivers none twice (design-agents.md, "the durable announce inbox"; OpenClaw loses them).

The gateway runs as a real process (``python -m clawline gateway run``) with the offline model.
Ten parents fan out in waves: eight spawn 20 children each that sleep 30 s (in flight when the
process dies), two spawn 40 children each that answer at once (their completions are delivered
while the first gateway lives, and their waves go on in the second life). Once 200 spawns are
accepted and some completions delivered, the process is killed. A second gateway on the same
state directory must end every accepted run (``lost`` for the ones cut off), deliver every
completion exactly once — none of those delivered before the crash again — and let the
parents take turns on them. The store is read directly after each life.
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from clawline.client.connection import GatewayClient
from clawline.records.collab import InboxItem, SubagentRun
from clawline.records.task import TaskRecord
from clawline.store.base import Store
from tests.e2e.support import (
    all_tasks,
    clean_env,
    gateway_process,
    message_events,
    opened_store,
    until,
)

TOKEN = "crash-recovery-token-0123"
SLOW_PARENTS = tuple(f"agent:main:slow{n}" for n in range(8))
FAST_PARENTS = tuple(f"agent:main:fast{n}" for n in range(2))
PARENTS = SLOW_PARENTS + FAST_PARENTS
SLOW_WAVE = "spawn 20 x: sleep 30000"
FAST_WAVE = "spawn 40 x: sleep 20"
ACCEPTED_BEFORE_KILL = 200
CONFIG = """
[agents]
echo_delay_ms = 0

[agents.defaults.subagents]
maxChildrenPerAgent = 20
maxConcurrent = 500
"""
LOST_ERROR = "lost: gateway restarted"


async def _kill_point(client: GatewayClient) -> bool:
    """200 spawns accepted and at least one completion delivered (fast parents)."""
    listed = await client.request("tasks.list", {"limit": 1000})
    assert isinstance(listed, dict)
    tasks = listed["tasks"]
    delivered = sum(task["deliveryStatus"] == "delivered" for task in tasks)
    return len(tasks) >= ACCEPTED_BEFORE_KILL and delivered > 0


def _settled_check(client: GatewayClient) -> Callable[[], Awaitable[bool]]:
    """Every task terminal and delivered and no session running, in three looks in a row with
    the same number of tasks (a parent's turn on a delivery may still spawn, so one quiet look
    is not enough)."""
    quiet: list[int] = []

    async def check() -> bool:
        listed = await client.request("tasks.list", {"limit": 1000})
        sessions = await client.request("sessions.list", {"limit": 1000})
        assert isinstance(listed, dict)
        assert isinstance(sessions, dict)
        tasks = listed["tasks"]
        busy = [row["key"] for row in sessions["sessions"] if row.get("hasActiveRun")]
        done = all(
            task["status"] not in ("queued", "running") and task["deliveryStatus"] != "pending"
            for task in tasks
        )
        if not done or busy:
            quiet.clear()
            return False
        quiet.append(len(tasks))
        return len(quiet) >= 3 and quiet[-1] == quiet[-3]

    return check


def _runs(store: Store) -> dict[str, SubagentRun]:
    return {run.run_id: run for key in PARENTS for run in store.runs.for_requester(key)}


def _inbox(store: Store, run_ids: Mapping[str, object]) -> dict[str, InboxItem | None]:
    return {run_id: store.inbox.by_run(run_id) for run_id in run_ids}


def _deliveries(store: Store) -> dict[str, list[tuple[int, Mapping[str, Any]]]]:
    """Per parent: its transcript's completion deliveries ``(seq, data)``."""
    return {
        key: [(seq, data) for seq, data in message_events(store, key) if "announce" in data]
        for key in PARENTS
    }


async def test_sigkill_mid_flight_then_restart_delivers_every_completion_exactly_once(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").write_text(CONFIG, encoding="utf-8")
    env = clean_env(state, CLAWLINE_GATEWAY_TOKEN=TOKEN)
    gateway_args = ("--log-level", "warning")

    # --- first life: fan out, then die mid-flight ------------------------------------------
    async with gateway_process(env, tmp_path / "life1.log", *gateway_args) as life1:
        client = await GatewayClient.connect(life1.url, token=TOKEN)
        try:
            for key in PARENTS:
                message = SLOW_WAVE if key in SLOW_PARENTS else FAST_WAVE
                params = {"sessionKey": key, "message": message, "idempotencyKey": f"wave-{key}"}
                ack = await client.request("chat.send", params)
                assert isinstance(ack, dict)
                assert ack["status"] == "started", ack
            await until(lambda: _kill_point(client), timeout=20, what="200 accepted spawns")
        finally:
            await client.close()
        assert await life1.kill() == -signal.SIGKILL

    with opened_store(state) as store:
        tasks_at_kill = {task.task_id: task for task in all_tasks(store)}
        runs_at_kill = _runs(store)
        inbox_at_kill = _inbox(store, runs_at_kill)
        deliveries_at_kill = _deliveries(store)
    running_at_kill = {
        t.run_id for t in tasks_at_kill.values() if t.status == "running" and t.run_id is not None
    }
    delivered_at_kill = {
        run_id: (row.delivered_at, row.delivery_seq, row.requester_session_key)
        for run_id, row in inbox_at_kill.items()
        if row is not None and row.delivered_at is not None
    }
    assert len(tasks_at_kill) >= ACCEPTED_BEFORE_KILL
    assert {t.run_id for t in tasks_at_kill.values()} == set(runs_at_kill)
    assert {t.status for t in tasks_at_kill.values()} <= {"running", "succeeded"}
    assert len(running_at_kill) >= len(SLOW_PARENTS) * 10, "the kill came too late"
    assert all(runs_at_kill[run_id].active for run_id in running_at_kill)
    assert delivered_at_kill, "no completion was delivered before the kill"
    assert all(inbox_at_kill[run_id] is None for run_id in running_at_kill)

    # --- second life: recovery, redelivery, the parents' turns ------------------------------
    async with gateway_process(env, tmp_path / "life2.log", *gateway_args) as life2:
        client = await GatewayClient.connect(life2.url, token=TOKEN)
        try:
            await until(_settled_check(client), timeout=30, interval=0.1, what="a quiet gateway")
        finally:
            await client.close()
        assert await life2.terminate() == 0, life2.log()
    assert "recovery:" in (tmp_path / "life2.log").read_text(encoding="utf-8")

    with opened_store(state) as store:
        tasks = {task.task_id: task for task in all_tasks(store)}
        runs = _runs(store)
        inbox = _inbox(store, runs)
        deliveries = _deliveries(store)
        child_status = {run.run_id: _status(store, run.child_session_key) for run in runs.values()}

    # every accepted spawn ended; the ones cut off by the crash are lost, the others succeeded
    assert set(tasks) >= set(tasks_at_kill)
    assert {t.run_id for t in tasks.values()} == set(runs)
    assert all(not run.active for run in runs.values())
    _assert_terminal(tasks.values(), running_at_kill)
    assert {run_id for run_id in running_at_kill if child_status[run_id] != "failed"} == set()

    # every completion is in the inbox, delivered into its requester's transcript
    assert all(row is not None for row in inbox.values()), "a completion was never written"
    rows = {run_id: row for run_id, row in inbox.items() if row is not None}
    assert all(row.delivered_at is not None for row in rows.values())
    assert all(row.delivery_seq is not None for row in rows.values()), "retired, not delivered"
    assert {run_id for run_id, row in rows.items() if row.status == "lost"} == running_at_kill
    for run_id, (delivered_at, seq, requester) in delivered_at_kill.items():
        row = rows[run_id]
        assert (row.delivered_at, row.delivery_seq, row.requester_session_key) == (
            delivered_at,
            seq,
            requester,
        ), f"{run_id} was delivered again after the restart"

    # ... exactly once: each run id appears in exactly one delivery message, the one its row
    # names, and the deliveries of the first life are still there unchanged
    delivered = Counter(
        run_id
        for messages in deliveries.values()
        for _, data in messages
        for run_id in data["announce"]["runIds"]
    )
    assert set(delivered) == set(runs)
    assert {run_id: n for run_id, n in delivered.items() if n != 1} == {}
    for key, messages in deliveries.items():
        by_seq = dict(messages)
        for run in (run for run in runs.values() if run.requester_session_key == key):
            data = by_seq[rows[run.run_id].delivery_seq or 0]
            assert run.run_id in data["announce"]["runIds"]
            event_keys = [event["childSessionKey"] for event in data["internalEvents"]]
            assert run.child_session_key in event_keys
        assert deliveries_at_kill[key] == messages[: len(deliveries_at_kill[key])]

    # the parents took a turn on every delivery made by the second life
    with opened_store(state) as store:
        for key in PARENTS:
            _assert_turns_after_new_deliveries(
                message_events(store, key), len(deliveries_at_kill[key])
            )
    assert time.monotonic() - started < 50


def _status(store: Store, key: str) -> str | None:
    entry = store.get(key)
    return None if entry is None else entry.status


def _assert_terminal(tasks: Iterable[TaskRecord], lost_run_ids: set[str]) -> None:
    statuses: Counter[tuple[str, bool]] = Counter()
    for task in tasks:
        lost = task.run_id in lost_run_ids
        statuses[(task.status, lost)] += 1
        if lost:
            assert (task.status, task.error) == ("lost", LOST_ERROR), task
        else:
            assert task.status == "succeeded", task
        assert task.delivery_status == "delivered", task
    assert statuses[("lost", True)] == len(lost_run_ids)


def _assert_turns_after_new_deliveries(
    messages: list[tuple[int, Mapping[str, Any]]], delivered_before: int
) -> None:
    """Every delivery message after the first ``delivered_before`` is answered by a turn run on
    it (an assistant message with the delivery's run id)."""
    seen = 0
    answered: set[str] = set()
    pending: list[str] = []
    for _, data in messages:
        if "announce" in data:
            seen += 1
            if seen > delivered_before:
                pending.append(str(data["runId"]))
        elif data.get("role") == "assistant" and data.get("runId") in pending:
            answered.add(str(data["runId"]))
    assert set(pending) == answered, f"deliveries without a turn: {set(pending) - answered}"
