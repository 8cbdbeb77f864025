"""ACP spawns are keyed like sub-agent spawns (:mod:`clawline.collab.spawn_key`): the same
call again answers the child it made and starts no second agent process — both when the tool
finds the key before its checks and when the spawn transaction finds it."""

from __future__ import annotations

from dataclasses import replace

from clawline.collab.spawn import RUN_MODE_NOTE, SessionsSpawnTool
from clawline.collab.spawn_args import parse_spawn_args
from clawline.records.task import TaskRecord
from tests.acp_runtime.conftest import Acp
from tests.acp_runtime.support import MAIN, eventually, pids
from tests.collab.support import invoke, tool_ctx
from tests.collab.test_spawn_lineage import spawn_tool

ARGS = {"runtime": "acp", "agentId": "tiny", "task": "summarise the repo"}


def tasks_of(acp: Acp) -> list[TaskRecord]:
    return [t for t in acp.services.tasks.for_session(MAIN) if t.runtime == "acp"]


async def test_the_same_acp_call_again_answers_its_child(acp: Acp) -> None:
    services = acp.services
    ctx = replace(tool_ctx(services, MAIN), tool_call_id="call_acp")
    first = await invoke(spawn_tool(services), ctx, **ARGS)
    assert first["status"] == "accepted", first
    assert first["note"] == RUN_MODE_NOTE
    (record,) = services.store.runs.for_requester(MAIN)
    entry = services.store.get(MAIN)
    assert entry is not None
    assert record.spawn_key == f"{entry.session_id}/call_acp"
    await eventually(lambda: all(task.terminal for task in tasks_of(acp)))

    assert await invoke(spawn_tool(services), ctx, **ARGS) == first
    # past the tool's own look-up, the spawn transaction finds the key
    tool = spawn_tool(services)
    assert isinstance(tool, SessionsSpawnTool)
    again = await tool.acp_spawner.spawn(ctx, parse_spawn_args(ARGS), RUN_MODE_NOTE)
    assert again.details == first
    assert len(pids(acp.log)) == 1  # one agent process, ever
    assert len(tasks_of(acp)) == 1
    assert [run.run_id for run in services.store.runs.for_requester(MAIN)] == [first["runId"]]
    assert [child.key for child in services.store.children(MAIN)] == [first["childSessionKey"]]
