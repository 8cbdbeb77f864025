"""Exactly-once spawn across SIGKILLs of a real gateway process (docs/security.md, "Exactly-once
spawn across a crash").

Ten parents each get ``spawn 20 x: sleep 600`` with at most 5 active children, so each wave runs
in several turns, resumed by the children's completions. Three lives on one state directory:

1. the gateway kills itself (``tests/e2e/spawn_crash_plugin.py``) right after a spawn committed,
   at the first spawn after every parent has started its wave: where the child used to be
   committed without its result in the parent's transcript (the crash window). The result now
   commits with the child (``ToolContext.record_result``), so no spawn may be left without it;
2. after the restart, a SIGKILL from the test at a moment of its choosing, once every unfinished
   parent has a child that started in this life;
3. the gateway runs until everything is settled.

Each parent must end with exactly 20 children — one per wave slot, keyed by its slot's call id —
every task terminal, and every completion delivered exactly once. Children take 600 ms, longer
than a parent's turn of up to 5 spawns (the plugin holds each spawn 40 ms), so at each kill every
unfinished parent has a child running: its loss is announced after the restart and resumes the
wave (a parent with nothing running would have nothing to resume it).
"""

from __future__ import annotations

import asyncio
import re
import signal
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from clawline.client.connection import GatewayClient
from clawline.store.base import Store
from tests.e2e.support import (
    GatewayProcess,
    all_tasks,
    clean_env,
    gateway_process,
    message_events,
    opened_store,
    until,
)

TOKEN = "spawn-crash-token-0123"
PARENTS = tuple(f"agent:main:wave{n}" for n in range(10))
WAVE_SIZE = 20
CHILD_MS = 600
WAVE = f"spawn {WAVE_SIZE} x: sleep {CHILD_MS}"
RECENT_MS = 300
"""A child started less than this long ago is still running when the test's kill lands."""
CONFIG = """
[agents]
echo_delay_ms = 0

[agents.defaults.subagents]
maxChildrenPerAgent = 5
maxConcurrent = 500

[plugins]
enabled = ["tests.e2e.spawn_crash_plugin"]

[plugins.entries."spawn-crash".config]
armFile = "{arm}"
delayMs = 40
"""
REPO = Path(__file__).resolve().parents[2]


async def _tasks(client: GatewayClient) -> list[dict[str, Any]]:
    listed = await client.request("tasks.list", {"limit": 1000})
    assert isinstance(listed, dict)
    tasks: list[dict[str, Any]] = listed["tasks"]
    return tasks


def _by_parent(tasks: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {key: [] for key in PARENTS}
    for task in tasks:
        grouped.setdefault(task["requesterSessionKey"], []).append(task)
    return grouped


def _every_wave_started(client: GatewayClient) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return all(_by_parent(await _tasks(client)).values())

    return check


def _every_unfinished_wave_has_a_fresh_child(
    client: GatewayClient, life_started_ms: int
) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        now = int(time.time() * 1000)
        grouped = _by_parent(await _tasks(client))
        fresh = 0
        for tasks in grouped.values():
            if len(tasks) >= WAVE_SIZE:
                continue
            started = [
                task["startedAt"] or 0
                for task in tasks
                if task["status"] == "running" and (task["startedAt"] or 0) >= life_started_ms
            ]
            if not started or max(started) < now - RECENT_MS:
                return False
            fresh += 1
        return fresh > 0

    return check


def _settled(client: GatewayClient) -> Callable[[], Awaitable[bool]]:
    """Every wave complete, every task terminal and delivered, nothing running — in three
    looks in a row."""
    quiet: list[int] = []

    async def check() -> bool:
        tasks = await _tasks(client)
        sessions = await client.request("sessions.list", {"limit": 1000})
        assert isinstance(sessions, dict)
        busy = [row["key"] for row in sessions["sessions"] if row.get("hasActiveRun")]
        done = len(tasks) >= WAVE_SIZE * len(PARENTS) and all(
            task["status"] not in ("queued", "running") and task["deliveryStatus"] != "pending"
            for task in tasks
        )
        if not done or busy:
            quiet.clear()
            return False
        quiet.append(len(tasks))
        return len(quiet) >= 3

    return check


async def _start_waves(life: GatewayProcess) -> None:
    client = await GatewayClient.connect(life.url, token=TOKEN)
    try:
        for key in PARENTS:
            params = {"sessionKey": key, "message": WAVE, "idempotencyKey": f"wave-{key}"}
            ack = await client.request("chat.send", params)
            assert isinstance(ack, dict)
            assert ack["status"] == "started", ack
        await until(_every_wave_started(client), timeout=10, what="every parent spawning")
    finally:
        await client.close()


def _cut_off_spawns(store: Store) -> list[str]:
    """Spawn keys recorded whose call has no result in the parent's transcript."""
    cut: list[str] = []
    for key in PARENTS:
        entry = store.get(key)
        assert entry is not None
        messages = [data for _, data in message_events(store, key)]
        answered = {m.get("toolCallId") for m in messages if m.get("role") == "tool"}
        asked = [
            call["id"]
            for m in messages
            for call in m.get("toolCalls") or []
            if call["name"] == "sessions_spawn"
        ]
        for call_id in asked:
            spawn_key = f"{entry.session_id}/{call_id}"
            if call_id not in answered and store.runs.by_spawn_key(key, spawn_key) is not None:
                cut.append(spawn_key)
    return cut


async def test_sigkilled_waves_make_exactly_one_child_per_slot(tmp_path: Path) -> None:
    started = time.monotonic()
    state = tmp_path / "state"
    state.mkdir()
    arm = tmp_path / "arm"
    (state / "config.toml").write_text(CONFIG.format(arm=arm), encoding="utf-8")
    env = clean_env(state, CLAWLINE_GATEWAY_TOKEN=TOKEN, PYTHONPATH=str(REPO))
    args = ("--log-level", "warning")

    # --- first life: dies right after a spawn's commit (where its crash window was) ---------
    async with gateway_process(env, tmp_path / "life1.log", *args) as life1:
        await _start_waves(life1)
        arm.touch()
        code = await asyncio.wait_for(life1.process.wait(), 15)
        assert code == -signal.SIGKILL, life1.log()
    arm.unlink()
    with opened_store(state) as store:
        accepted_in_life1 = len(all_tasks(store))
        assert accepted_in_life1 >= len(PARENTS), "killed before every wave spawned"
        assert _cut_off_spawns(store) == [], "a spawn committed without its result"

    # --- second life: killed by the test mid-waves -----------------------------------------
    async with gateway_process(env, tmp_path / "life2.log", *args) as life2:
        life_started_ms = int(time.time() * 1000)
        client = await GatewayClient.connect(life2.url, token=TOKEN)
        try:
            fresh = _every_unfinished_wave_has_a_fresh_child(client, life_started_ms)
            await until(fresh, timeout=15, interval=0.02, what="every wave going on")
        finally:
            await client.close()
        assert await life2.kill() == -signal.SIGKILL
    with opened_store(state) as store:
        accepted_in_life2 = len(all_tasks(store))
    assert accepted_in_life1 < accepted_in_life2 < WAVE_SIZE * len(PARENTS)

    # --- third life: everything settles ----------------------------------------------------
    async with gateway_process(env, tmp_path / "life3.log", *args) as life3:
        client = await GatewayClient.connect(life3.url, token=TOKEN)
        try:
            await until(_settled(client), timeout=30, interval=0.1, what="every wave done")
        finally:
            await client.close()
        assert await life3.terminate() == 0, life3.log()

    with opened_store(state) as store:
        for key in PARENTS:
            _assert_one_child_per_slot(store, key)
    assert time.monotonic() - started < 40


def _assert_one_child_per_slot(store: Store, key: str) -> None:
    entry = store.get(key)
    assert entry is not None
    events = message_events(store, key)
    wave_seq = next(seq for seq, data in events if data.get("role") == "user")
    runs = store.runs.for_requester(key)
    slot = re.compile(rf"{re.escape(entry.session_id)}/offline-wave-{wave_seq}-(\d+)(?:-r\d+)?")
    slots = Counter(int(slot.fullmatch(run.spawn_key or "")[1]) for run in runs)  # type: ignore[index]
    assert slots == dict.fromkeys(range(WAVE_SIZE), 1), key
    assert len(store.children(key)) == WAVE_SIZE, key
    tasks = [task for run in runs for task in store.tasks.by_run_id(run.run_id)]
    assert len(tasks) == WAVE_SIZE, key
    assert {task.status for task in tasks} <= {"succeeded", "lost"}, key
    assert all(task.delivery_status == "delivered" for task in tasks), key
    assert all(not run.active for run in runs), key
    delivered: Counter[str] = Counter(
        run_id
        for _, data in events
        if isinstance(data.get("announce"), Mapping)
        for run_id in data["announce"]["runIds"]
    )
    assert delivered == {run.run_id: 1 for run in runs}, key
    rows = [store.inbox.by_run(run.run_id) for run in runs]
    assert all(row is not None and row.delivery_seq is not None for row in rows), key
