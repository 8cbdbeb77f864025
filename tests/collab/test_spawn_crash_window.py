"""The crash window of a spawn, in one process and deterministic: the child's session, record and
task are committed, but the call's result is not in the parent's transcript yet when the
process dies. After the restart the parent's wave must find that child instead of making one
more: ``spawn 4 x:`` ends with exactly 4 children.

The turn loop lets ``sessions_spawn`` write its result in the spawn's own transaction
(``ToolContext.record_result``), which closes that window: the last test shows it. The window
stays for a spawn whose result the turn appends afterwards (a context without
``record_result``: a plugin tool spawning through ``ctx.host``, an ACP child), which the first
test takes by calling the tool without it.

The first life runs the real turn loop and offline model; its ``sessions_spawn`` is the real
tool, except that the 2nd call never returns once its spawn is committed (the process "dies"
there), and its children never finish. What SQLite has committed at that moment is copied to a
new state directory (the online backup API: committed transactions only, as a SIGKILL leaves
them) and a second life starts on the copy: recovery, the announce dispatcher, the parent's
completion turns.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from clawline import keys
from clawline.agents.runner import RunContext, RunOutput
from clawline.agents.tools.base import Tool, ToolContext, ToolResult
from clawline.collab.spawn import SessionsSpawnTool
from clawline.config import Settings
from clawline.records.session import SessionEntry
from clawline.runtime import Runtime
from clawline.types import JSON
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, tool_of, transcript
from tests.collab.test_spawn_lineage import quiesce

WAVE_SIZE = 4
CONFIG: dict[str, Any] = {
    "agents": {"echo_delay_ms": 0, "defaults": {"subagents": {"maxChildrenPerAgent": 2}}}
}
WAVE = f"spawn {WAVE_SIZE} x: reply: done"


class DiesAfterSpawn:
    """``sessions_spawn`` whose ``at``-th call commits its spawn and then never returns."""

    spec = SessionsSpawnTool.spec

    def __init__(self, real: Tool, at: int, *, records: bool) -> None:
        self.real = real
        self.at = at
        self.records = records
        """Whether the real tool gets ``record_result`` (its result in its transaction)."""
        self.calls = 0
        self.died = asyncio.Event()

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        if not self.records:
            ctx = replace(ctx, record_result=None)
        result = await self.real.invoke(ctx, args)
        self.calls += 1
        if self.calls == self.at:
            self.died.set()
            await asyncio.Event().wait()  # nothing after this point happens: SIGKILL
        return result


class NeverEnds:
    """The first life's children: running when the process dies."""

    async def run(self, ctx: RunContext) -> RunOutput:
        await asyncio.Event().wait()
        return RunOutput()


def backup(source: Path, state: Path) -> None:
    state.mkdir()
    target = Settings(state_dir=state).sqlite_path
    with closing(sqlite3.connect(source)) as db, closing(sqlite3.connect(target)) as copy:
        db.backup(copy)


@pytest.fixture
async def second_life(tmp_path: Path) -> AsyncIterator[list[Runtime]]:
    opened: list[Runtime] = []
    yield opened
    for services in opened:
        await services.runs.shutdown()
        await services.announcer.stop()
        services.close()


def spawn_results(messages: list[Mapping[str, JSON]]) -> list[Mapping[str, JSON]]:
    return [m for m in messages if m.get("role") == "tool" and m.get("name") == "sessions_spawn"]


async def crash_after_second_spawn(
    make_services: MakeServices, second_life: list[Runtime], tmp_path: Path, *, records: bool
) -> tuple[Runtime, SessionEntry, str]:
    """The first life dies once its 2nd spawn is committed; the second life opens on what was
    committed. Returns it, the parent's entry there and the wave's slot id prefix."""
    first = await make_services(CONFIG, scripted=False)
    dies = DiesAfterSpawn(tool_of(first, "sessions_spawn"), at=2, records=records)
    first.runs.tools.register(dies, replace=True)
    first.runs.route(keys.is_subagent_key, NeverEnds)
    await first.runs.send(session_key=MAIN, message=WAVE, idempotency_key="wave")
    await asyncio.wait_for(dies.died.wait(), 10)
    backup(first.settings.sqlite_path, tmp_path / "after-crash")
    services = Runtime.open(Settings(state_dir=tmp_path / "after-crash", raw=CONFIG))
    second_life.append(services)
    parent = services.store.get(MAIN)
    assert parent is not None
    events = services.store.events(parent.session_id)
    wave_seq = next(event.seq for event in events if event.data.get("role") == "user")
    return services, parent, f"offline-wave-{wave_seq}-"


async def test_a_spawn_cut_off_by_a_crash_is_found_again_not_redone(
    make_services: MakeServices, second_life: list[Runtime], tmp_path: Path
) -> None:
    services, parent, slot = await crash_after_second_spawn(
        make_services, second_life, tmp_path, records=False
    )
    store = services.store
    # the state the crash left: slot 1's child committed, its call without a result
    committed = {run.spawn_key: run for run in store.runs.for_requester(MAIN)}
    assert set(committed) == {f"{parent.session_id}/{slot}0", f"{parent.session_id}/{slot}1"}
    assert all(run.active for run in committed.values())
    last = transcript(services, MAIN)[-1]
    calls = last["toolCalls"]
    assert isinstance(calls, list)
    assert [call["id"] for call in calls if isinstance(call, dict)] == [f"{slot}1"]
    assert [m["toolCallId"] for m in spawn_results(transcript(services, MAIN))] == [f"{slot}0"]
    assert parent.status == "running"
    cut_off = committed[f"{parent.session_id}/{slot}1"]

    await services.announcer.start()  # recovery, then the deliveries and the parent's turns
    await quiesce(services)

    runs = store.runs.for_requester(MAIN)
    assert sorted(run.spawn_key or "" for run in runs) == [
        f"{parent.session_id}/{slot}{k}" for k in range(WAVE_SIZE)
    ]
    assert len(store.children(MAIN)) == WAVE_SIZE
    tasks = [task for run in runs for task in store.tasks.by_run_id(run.run_id)]
    assert Counter(task.status for task in tasks) == {"lost": 2, "succeeded": 2}
    # the redo kept the call id and got the child the first life made
    messages = transcript(services, MAIN)
    redone = [m for m in spawn_results(messages) if m["toolCallId"] == f"{slot}1"]
    assert [m["details"] for m in redone] == [
        {
            "status": "accepted",
            "childSessionKey": cut_off.child_session_key,
            "runId": cut_off.run_id,
            "mode": "run",
            "note": redone[0]["details"]["note"],  # type: ignore[index,call-overload]
        }
    ]
    # every completion was delivered exactly once
    delivered = Counter(
        run_id
        for m in messages
        if isinstance(m.get("announce"), Mapping)
        for run_id in m["announce"]["runIds"]  # type: ignore[index,call-overload,union-attr]
    )
    assert delivered == {run.run_id: 1 for run in runs}


async def test_a_spawn_and_its_result_commit_together(
    make_services: MakeServices, second_life: list[Runtime], tmp_path: Path
) -> None:
    services, parent, slot = await crash_after_second_spawn(
        make_services, second_life, tmp_path, records=True
    )
    store = services.store
    committed = {run.spawn_key: run for run in store.runs.for_requester(MAIN)}
    assert set(committed) == {f"{parent.session_id}/{slot}0", f"{parent.session_id}/{slot}1"}
    # the tool never returned, yet its result is committed: with the child, not after it
    results = spawn_results(transcript(services, MAIN))
    assert [m["toolCallId"] for m in results] == [f"{slot}0", f"{slot}1"]
    cut_off = committed[f"{parent.session_id}/{slot}1"]
    assert results[1]["details"]["childSessionKey"] == cut_off.child_session_key  # type: ignore[index,call-overload]

    await services.announcer.start()
    await quiesce(services)

    runs = store.runs.for_requester(MAIN)
    assert sorted(run.spawn_key or "" for run in runs) == [
        f"{parent.session_id}/{slot}{k}" for k in range(WAVE_SIZE)
    ]
    results = spawn_results(transcript(services, MAIN))
    accepted = [
        str(m["toolCallId"])
        for m in results
        if m["details"]["status"] == "accepted"  # type: ignore[index,call-overload]
    ]
    assert sorted(accepted) == [f"{slot}{k}" for k in range(WAVE_SIZE)]  # each slot's once
