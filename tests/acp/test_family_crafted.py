"""The family operation (docs/acp-client.md) against the crafted agent, a real subprocess.

Every test ends with the crafted agent's record of what the loader sent, validated against the
ACP v1 schema, and with every agent process gone (``crafted_link`` checks that on exit).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from clawline.acp_client.agent_calls import NO_SESSION_LOAD
from clawline.acp_client.family_loader import (
    INVALID_PAYLOAD,
    NO_SESSION_LIST,
    FamilyResult,
    get_acp_session_family,
    get_session_family,
)
from clawline.acp_client.link import spawned_agent
from clawline.acp_client.walk import INVALID_CURSOR, INVALID_PAGE

from .crafted_agent import MAIN, SUB
from .crafted_run import Traffic, agent_command, agent_env, crafted_link, process_gone

INIT_PARAMS = {"protocolVersion": 1, "clientCapabilities": {}}


def failure(error: str) -> FamilyResult:
    return {"success": False, "current": None, "children": [], "error": error}


def member(name: str, title: str | None, updated_at: str | None) -> dict[str, Any]:
    return {
        "sessionKey": SUB + name,
        "title": title or SUB + name,
        "updatedAt": updated_at,
        "parentSessionKey": MAIN,
    }


async def family_of(tmp_path: Path, scenario: str, key: str = MAIN) -> tuple[FamilyResult, Traffic]:
    async with crafted_link(tmp_path, scenario) as (link, traffic):
        result = await get_session_family(link, key)
    traffic.check_sent_requests()
    assert traffic.received("session/load") == []
    return result, traffic


async def test_family_over_overlapping_pages(tmp_path: Path) -> None:
    async with crafted_link(tmp_path, "family") as (link, traffic):
        family = await get_session_family(link, MAIN)
        nested = await get_acp_session_family(link, {"sessionKey": SUB + "a"})
    assert family == {
        "success": True,
        "current": {
            "sessionKey": MAIN,
            "title": "Main chat",
            "updatedAt": "2026-01-01T12:00:00Z",
            "parentSessionKey": None,
        },
        "children": [
            member("a", "first A", "2026-01-01T11:00:00Z"),
            member("blank", None, "2026-01-01T10:30:00"),
            member("b", "B", "2026-01-01T12:00:00+02:00"),
            member("self", None, "2026-01-01T09:00:00-01:00"),
            member("bad", None, "yesterday"),
            member("none", None, None),
        ],
    }
    assert nested == {
        "success": True,
        "current": member("a", "first A", "2026-01-01T11:00:00Z"),
        "children": [
            {
                "sessionKey": SUB + "grand",
                "title": SUB + "grand",
                "updatedAt": "2026-01-01T13:00:00Z",
                "parentSessionKey": SUB + "a",
            }
        ],
    }
    assert traffic.params("initialize") == [INIT_PARAMS]
    pages = [{}, {"cursor": "c1"}, {"cursor": "c2"}]
    assert traffic.params("session/list") == pages + pages
    assert traffic.received("session/load") == []
    assert traffic.check_sent_requests() == 7
    assert len(traffic.pids()) == 1


async def test_empty_listing(tmp_path: Path) -> None:
    result, traffic = await family_of(tmp_path, "empty")
    assert result == {"success": True, "current": None, "children": []}
    assert traffic.params("session/list") == [{}]


async def test_null_cursor_ends_the_walk(tmp_path: Path) -> None:
    result, traffic = await family_of(tmp_path, "cursor_null")
    assert result["success"] is True
    assert result["current"] is not None
    assert traffic.params("session/list") == [{}]


@pytest.mark.parametrize(
    ("scenario", "calls"),
    [("cursor_int", 1), ("cursor_empty", 1), ("cursor_blank", 1), ("cursor_repeat", 2)],
)
async def test_bad_cursors(tmp_path: Path, scenario: str, calls: int) -> None:
    result, traffic = await family_of(tmp_path, scenario)
    assert result == failure(INVALID_CURSOR)
    assert traffic.params("session/list") == [{}, {"cursor": "c1"}][:calls]


@pytest.mark.parametrize(
    ("scenario", "calls"),
    [
        ("row_no_session_id", 1),
        ("row_empty_session_id", 1),
        ("row_session_id_number", 1),
        ("row_no_cwd", 1),
        ("row_cwd_number", 1),
        ("row_empty_cwd", 1),
        ("row_not_object", 1),
        ("sessions_not_array", 1),
        ("sessions_missing", 1),
        ("page_array", 1),
        ("page_null", 1),
        ("bad_second_page", 2),
    ],
)
async def test_bad_pages(tmp_path: Path, scenario: str, calls: int) -> None:
    result, traffic = await family_of(tmp_path, scenario)
    assert result == failure(INVALID_PAGE)
    assert len(traffic.received("session/list")) == calls


async def test_a_129th_page_is_never_requested(tmp_path: Path) -> None:
    result, traffic = await family_of(tmp_path, "pages_endless")
    assert result == failure("ACP session/list exceeded 128 pages")
    assert traffic.params("session/list") == [{}] + [{"cursor": f"c{n}"} for n in range(1, 128)]


async def test_exactly_128_pages_are_fine(tmp_path: Path) -> None:
    result, traffic = await family_of(tmp_path, "pages_128")
    assert result["success"] is True
    assert len(result["children"]) == 128
    assert len(traffic.received("session/list")) == 128


@pytest.mark.parametrize(
    "scenario",
    [
        "list_false",
        "list_true",
        "list_string",
        "list_array",
        "list_number",
        "list_null",
        "no_session_capabilities",
    ],
)
async def test_list_capability_must_be_an_object(tmp_path: Path, scenario: str) -> None:
    result, traffic = await family_of(tmp_path, scenario)
    assert result == failure(NO_SESSION_LIST)
    assert traffic.received("session/list") == []
    assert traffic.params("initialize") == [INIT_PARAMS]


@pytest.mark.parametrize("scenario", ["no_load", "load_false", "load_zero"])
async def test_load_session_is_required(tmp_path: Path, scenario: str) -> None:
    result, traffic = await family_of(tmp_path, scenario)
    assert result == failure(NO_SESSION_LOAD)
    assert traffic.received("session/list") == []


async def test_truthy_load_session_qualifies(tmp_path: Path) -> None:
    result, _ = await family_of(tmp_path, "load_truthy_string")
    assert result["success"] is True


async def test_initialisation_is_retried_once_with_a_fresh_process(tmp_path: Path) -> None:
    result, traffic = await family_of(tmp_path, "init_fail_once")
    assert result["success"] is True
    assert traffic.params("initialize") == [INIT_PARAMS, INIT_PARAMS]
    assert len(traffic.pids()) == 2


async def test_a_hook_runs_before_each_attempt(tmp_path: Path) -> None:
    log = tmp_path / "hook.jsonl"
    seen: list[int] = []

    async def before_attempt() -> None:
        seen.append(len(Traffic(log).pids()))

    command = agent_command()
    env = agent_env("init_fail_once", log)
    async with spawned_agent(*command, env=env, before_attempt=before_attempt) as link:
        result = await get_session_family(link, MAIN)
        await get_session_family(link, MAIN)
    assert result["success"] is True
    assert seen == [0, 1]
    assert Traffic(log).check_sent_requests() == 2 + 3 + 3
    assert all(process_gone(pid) for pid in Traffic(log).pids())


async def test_initialisation_error_text(tmp_path: Path) -> None:
    result, traffic = await family_of(tmp_path, "init_error")
    assert result == failure("gateway unavailable")
    assert len(traffic.received("initialize")) == 2
    assert traffic.received("session/list") == []


async def test_process_exit_during_initialisation(tmp_path: Path) -> None:
    result, traffic = await family_of(tmp_path, "exit_on_init")
    assert result == failure("ACP process exited with code 3")
    assert len(traffic.pids()) == 2


async def test_list_errors_carry_the_agents_text(tmp_path: Path) -> None:
    result, _ = await family_of(tmp_path, "list_error")
    assert result == failure("gateway said no")


async def test_capability_flag_resets_when_the_connection_drops(tmp_path: Path) -> None:
    async with crafted_link(tmp_path, "exit_on_list") as (link, traffic):
        flags = [link.lists_sessions]
        await link.ready()
        flags.append(link.lists_sessions)
        first = await get_session_family(link, MAIN)
        flags.append(link.lists_sessions)
        second = await get_session_family(link, MAIN)
    assert flags == [False, True, False]
    assert first == second == failure("ACP process exited with code 7")
    assert len(traffic.pids()) == 2
    assert traffic.check_sent_requests() == 4


async def test_initialisation_is_single_flight(tmp_path: Path) -> None:
    import asyncio

    async with crafted_link(tmp_path, "family") as (link, traffic):
        results = await asyncio.gather(*(get_session_family(link, MAIN) for _ in range(3)))
    assert all(result["success"] for result in results)
    assert len(traffic.received("initialize")) == 1
    assert len(traffic.received("session/list")) == 9


async def test_no_side_effects_on_the_loaded_session(tmp_path: Path) -> None:
    load = {"sessionId": SUB + "a", "cwd": "/work/project", "mcpServers": []}
    prompt = {"sessionId": SUB + "a", "prompt": [{"type": "text", "text": "still there?"}]}
    async with crafted_link(tmp_path, "family") as (link, traffic):
        assert await link.request("session/load", load) == {}
        family = await get_session_family(link, MAIN)
        assert await link.request("session/prompt", prompt) == {"stopReason": "end_turn"}
    assert family["success"] is True
    assert traffic.params("session/load") == [load]
    methods = [message["method"] for message in traffic.received()]
    assert methods == ["initialize", "session/load", *["session/list"] * 3, "session/prompt"]
    assert traffic.check_sent_requests() == 6


async def test_invalid_payload_starts_no_agent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="clawline.acp.family"):
        async with crafted_link(tmp_path, "family") as (link, traffic):
            result = await get_acp_session_family(link, {"sessionKey": "agent:"})
    assert result == failure(INVALID_PAYLOAD)
    assert traffic.entries() == []
    assert caplog.messages == [f"[acp-chat] getSessionFamily failed: {INVALID_PAYLOAD}"]
    assert [record.levelno for record in caplog.records] == [logging.INFO]


async def test_failures_are_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="clawline.acp.family"):
        result, _ = await family_of(tmp_path, "cursor_repeat")
    assert result == failure(INVALID_CURSOR)
    assert caplog.messages == [f"[acp-chat] getSessionFamily failed: {INVALID_CURSOR}"]
    # the agent broke the protocol: a warning, one line, no traceback
    assert [(r.levelno, r.exc_info) for r in caplog.records] == [(logging.WARNING, None)]
