"""The family operation over connections made with the SDK's own client-side helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from acp import Client, connect_to_agent, spawn_agent_process, spawn_stdio_transport
from acp.connection import Connection
from acp.stdio import spawn_stdio_connection

from clawline.acp_client.family_loader import get_session_family
from clawline.acp_client.link import AgentLink

from .crafted_agent import MAIN, SUB
from .crafted_run import Traffic, agent_command, agent_env, process_gone


class QuietClient:
    """A client with no capabilities: updates are ignored."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None


async def ignore(method: str, params: Any, is_notification: bool) -> None:
    return None


async def test_over_a_client_side_connection(tmp_path: Path) -> None:
    log = tmp_path / "sdk.jsonl"
    command = agent_command()
    async with spawn_agent_process(
        cast(Client, QuietClient()),
        *command,
        env=agent_env("init_fail_once", log),
        transport_kwargs={"stderr": None},
    ) as (connection, process):
        link = AgentLink.over(connection, process)
        result = await get_session_family(link, MAIN)
    traffic = Traffic(log)
    assert result["success"] is True
    assert [m["sessionKey"] for m in result["children"]][:2] == [SUB + "a", SUB + "blank"]
    assert len(traffic.pids()) == 1
    assert len(traffic.received("initialize")) == 2
    assert traffic.check_sent_requests() == 5
    assert process_gone(traffic.pids()[0])


async def test_over_connect_to_agent_and_a_raw_connection(tmp_path: Path) -> None:
    log = tmp_path / "streams.jsonl"
    command = agent_command()
    async with spawn_stdio_transport(*command, env=agent_env("family", log), stderr=None) as (
        reader,
        writer,
        _process,
    ):
        connection = connect_to_agent(cast(Client, QuietClient()), writer, reader)
        try:
            result = await get_session_family(AgentLink.over(connection), SUB + "a")
        finally:
            await connection.close()
    async with spawn_stdio_connection(
        ignore, *command, env=agent_env("family", log), stderr=None
    ) as (raw, _process):
        assert isinstance(raw, Connection)
        again = await get_session_family(AgentLink.over(raw), SUB + "a")
    assert result == again
    assert result["success"] is True
    assert [m["sessionKey"] for m in result["children"]] == [SUB + "grand"]
    assert Traffic(log).check_sent_requests() == 8
    assert all(process_gone(pid) for pid in Traffic(log).pids())


@pytest.mark.parametrize(
    ("with_process", "error"),
    [(True, "ACP process exited with code 3"), (False, "Connection closed")],
)
async def test_process_exit_races_initialisation(
    tmp_path: Path, with_process: bool, error: str
) -> None:
    log = tmp_path / "exit.jsonl"
    async with spawn_agent_process(
        cast(Client, QuietClient()),
        *agent_command(),
        env=agent_env("exit_on_init", log),
        transport_kwargs={"stderr": None},
    ) as (connection, process):
        link = AgentLink.over(connection, process if with_process else None)
        result = await get_session_family(link, MAIN)
    assert result == {"success": False, "current": None, "children": [], "error": error}
    assert len(Traffic(log).received("initialize")) == 1


@pytest.mark.parametrize(
    ("scenario", "sessions", "next_cursor"),
    [("row_no_cwd", 0, None), ("row_not_object", 1, None), ("cursor_int", 1, None)],
)
async def test_the_parsed_sdk_api_hides_bad_pages(
    tmp_path: Path, scenario: str, sessions: int, next_cursor: str | None
) -> None:
    """Why the link sends raw requests: the SDK's parsed ``list_sessions`` silently drops bad
    rows and turns a bad ``nextCursor`` into "no more pages", where the family operation must
    fail with ``Invalid ACP session/list response`` / ``… cursor``."""
    log = tmp_path / "parsed.jsonl"
    async with spawn_agent_process(
        cast(Client, QuietClient()),
        *agent_command(),
        env=agent_env(scenario, log),
        transport_kwargs={"stderr": None},
    ) as (connection, _process):
        await connection.initialize(protocol_version=1)
        page = await connection.list_sessions()
    assert (len(page.sessions), page.next_cursor) == (sessions, next_cursor)
