"""The methods OpenClaw's Control UI calls (docs/control-ui.md), over a real socket: their
shapes, the empty answers of features clawline lacks, the keys the UI sends, and refusals."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from clawline.agents.echo import EchoRunner
from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.records.task import TaskRecord
from clawline.testing.clock import FakeClock
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.gateway.conftest import TOKEN
from tests.gateway.support import without_details
from tests.gateway.wire import WireClient

CONFIG = {
    "agents": {
        "defaults": {"model": "offline"},
        "list": [
            {"id": "main", "name": "Molty"},
            {"id": "ops", "model": "vllm/qwen3"},
        ],
    },
    "models": {"providers": {"vllm": {"api": "openai", "baseUrl": "http://127.0.0.1:9"}}},
}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def gw(
    tmp_path: Path, gateway_settings: GatewaySettings, clock: FakeClock
) -> AsyncIterator[RunningGateway]:
    settings = Settings(state_dir=tmp_path / "state", raw=CONFIG)
    async with running_gateway(
        tmp_path / "state", gateway_settings=gateway_settings, settings=settings, clock=clock
    ) as running:
        running.runtime.runs.runner = EchoRunner(delay_ms=0)
        yield running


async def refused(client: WireClient, method: str, params: Any) -> dict[str, Any]:
    frame = await client.call(method, params)
    assert frame["ok"] is False, frame
    return without_details(frame["error"])


async def converse(client: WireClient, key: str, *messages: str) -> None:
    for n, text in enumerate(messages):
        run = f"{key}-{n}"
        await client.ok("chat.send", {"sessionKey": key, "message": text, "idempotencyKey": run})
        await client.ok("agent.wait", {"runId": run})


async def test_agents_identity_and_models_come_from_the_configuration(client: WireClient) -> None:
    agents = await client.ok("agents.list", {})
    assert (agents["defaultId"], agents["mainKey"], agents["scope"]) == (
        "main",
        "main",
        "per-sender",
    )
    assert [agent["id"] for agent in agents["agents"]] == ["main", "ops"]
    assert agents["agents"][0]["identity"] == {"name": "Molty"}
    assert agents["agents"][1]["model"] == {"primary": "vllm/qwen3"}
    assert "name" not in agents["agents"][1]

    main = await client.ok("agent.identity.get", {})
    assert (main["agentId"], main["name"], main["nameSource"]) == ("main", "Molty", "agent")
    ops = await client.ok("agent.identity.get", {"sessionKey": "agent:ops:chat"})
    assert (ops["agentId"], ops["name"], ops["nameSource"]) == ("ops", "Assistant", "default")
    assert await refused(
        client, "agent.identity.get", {"agentId": "main", "sessionKey": "agent:ops:x"}
    ) == {
        "code": "INVALID_REQUEST",
        "message": 'agent "main" does not match session key agent "ops"',
    }

    models = await client.ok("models.list", {})
    assert models["models"] == [
        {"id": "offline", "name": "offline", "provider": "offline"},
        {"id": "qwen3", "name": "qwen3", "provider": "vllm"},
    ]
    only = await client.ok("models.list", {"provider": "vllm", "view": "configured"})
    assert [model["id"] for model in only["models"]] == ["qwen3"]
    assert (await refused(client, "models.list", {"preparedOnly": True, "refresh": True}))[
        "message"
    ] == "invalid models.list params: preparedOnly and refresh cannot be combined"


async def test_plugins_list_names_the_loaded_plugins(
    gw: RunningGateway, client: WireClient
) -> None:
    listed = await client.ok("plugins.list", {})
    assert listed["mutationAllowed"] is False
    assert listed["diagnostics"] == []
    names = [plugin["id"] for plugin in listed["plugins"]]
    assert names == [info.name for info in gw.runtime.plugins.plugins()]
    assert "clawline.gateway" in names
    assert {plugin["state"] for plugin in listed["plugins"]} == {"enabled"}
    assert (await refused(client, "plugins.list", {"x": 1}))["message"] == (
        "invalid plugins.list params: unknown key 'x'"
    )


async def test_features_clawline_lacks_answer_empty(client: WireClient) -> None:
    assert await client.ok("question.list", {}) == {"questions": []}
    assert await client.ok("progressCard.get", {"sessionKey": "main"}) == {"card": None}
    status = await client.ok("cron.status", {})
    assert (status["enabled"], status["jobs"], status["nextWakeAtMs"]) == (False, 0, None)
    jobs = await client.ok("cron.list", {"includeDisabled": True, "limit": 20, "sortDir": "asc"})
    assert jobs == {
        "jobs": [],
        "total": 0,
        "offset": 0,
        "limit": 20,
        "hasMore": False,
        "nextOffset": None,
    }
    runs = await client.ok("cron.runs", {"scope": "all", "limit": 10})
    assert (runs["entries"], runs["total"], runs["hasMore"]) == ([], 0, False)
    assert (await refused(client, "cron.list", {"limit": 201}))["message"] == (
        "invalid cron.list params: limit must be <= 200"
    )
    assert (await refused(client, "progressCard.get", {}))["message"] == (
        "invalid progressCard.get params: sessionKey is required"
    )


async def test_read_methods_need_read_and_question_list_needs_write(
    wire: Callable[..., Awaitable[WireClient]],
) -> None:
    reader = await wire()
    assert (await reader.connect(token=TOKEN, scopes=["operator.read"]))["ok"] is True
    for method in ("agents.list", "models.list", "plugins.list", "cron.status"):
        await reader.ok(method, {})
    refusal = await refused(reader, "question.list", {})
    assert refusal == {"code": "INVALID_REQUEST", "message": "missing scope: operator.write"}


async def test_sessions_describe_and_branches(client: WireClient) -> None:
    assert await client.ok("sessions.describe", {"key": "agent:main:nothing"}) == {"session": None}
    assert await client.ok("sessions.branches.list", {"sessionKey": "main"}) == {"branches": []}
    await converse(client, "main", "first question", "second question")
    described = await client.ok("sessions.describe", {"key": "main", "includeLastMessage": True})
    row = described["session"]
    assert row["key"] == "agent:main:main"
    assert row["lastMessagePreview"] == "echo: second question"
    branches = (await client.ok("sessions.branches.list", {"sessionKey": "main"}))["branches"]
    assert len(branches) == 1
    branch = branches[0]
    assert (branch["headline"], branch["messageCount"], branch["active"]) == (
        "second question",
        4,
        True,
    )
    history = await client.ok("chat.history", {"sessionKey": "main"})
    assert branch["leafEntryId"] == history["messages"][-1]["id"]
    assert (await refused(client, "sessions.describe", {"key": "main", "agentId": "ops"})) == {
        "code": "INVALID_REQUEST",
        "message": 'agent "ops" does not match session key agent "main"',
    }


async def test_chat_startup_is_history_with_the_session_row(client: WireClient) -> None:
    await converse(client, "main", "hello")
    startup = await client.ok("chat.startup", {"sessionKey": "main", "limit": 10})
    history = await client.ok("chat.history", {"sessionKey": "main", "limit": 10})
    assert startup["messages"] == history["messages"]
    assert startup["sessionInfo"]["key"] == "agent:main:main"
    assert startup["pendingInputs"] == {"items": [], "total": 0}
    assert startup["defaults"]["modelProvider"] == "offline"
    unknown = await client.ok("chat.startup", {"sessionKey": "agent:main:none"})
    assert (unknown["sessionInfo"], unknown["messages"]) == (None, [])
    link = await client.ok("chat.startup", {"shortId": "abc123", "agentId": "main"})
    assert link == {"resolution": {"ok": False}}
    assert (await refused(client, "chat.startup", {"shortId": "abc123"}))["message"] == (
        "invalid chat.startup params: agentId is required"
    )
    both = await refused(client, "chat.startup", {"sessionKey": "main", "shortId": "a"})
    assert both["message"] == "invalid chat.startup params: provide either sessionKey or shortId"


async def test_chat_history_max_bytes_cuts_from_the_oldest_end(client: WireClient) -> None:
    await converse(client, "main", *(f"message number {n} " + "x" * 400 for n in range(6)))
    full = (await client.ok("chat.history", {"sessionKey": "main"}))["messages"]
    assert len(full) == 12
    sizes = [len(orjson.dumps(message)) for message in full]
    budget = sum(sizes[-3:]) + 10
    capped = (await client.ok("chat.history", {"sessionKey": "main", "maxBytes": budget}))[
        "messages"
    ]
    assert capped == full[-3:]
    assert (await refused(client, "chat.history", {"sessionKey": "main", "maxBytes": 1023})) == {
        "code": "INVALID_REQUEST",
        "message": "invalid chat.history params: maxBytes must be >= 1024",
    }


async def test_sessions_list_configured_agents_only(gw: RunningGateway, client: WireClient) -> None:
    for key in ("agent:main:a", "agent:ops:b", "agent:stray:c"):
        await client.ok("sessions.patch", {"key": key, "label": key.replace(":", "-")})
    every = await client.ok("sessions.list", {})
    assert {row["key"] for row in every["sessions"]} == {
        "agent:main:a",
        "agent:ops:b",
        "agent:stray:c",
    }
    configured = await client.ok("sessions.list", {"configuredAgentsOnly": True})
    assert [row["key"] for row in configured["sessions"]] == ["agent:ops:b", "agent:main:a"]
    assert configured["totalCount"] == 2
    named = await client.ok("sessions.list", {"configuredAgentsOnly": True, "agentId": "stray"})
    assert [row["key"] for row in named["sessions"]] == ["agent:stray:c"]
    assert (await refused(client, "sessions.list", {"configuredAgentsOnly": "yes"}))["message"] == (
        "invalid sessions.list params: configuredAgentsOnly must be a boolean"
    )


async def make_task(gw: RunningGateway, n: int, agent: str) -> TaskRecord:
    registry = gw.runtime.tasks
    return await gw.runtime.call(
        lambda: registry.create(
            runtime="subagent",
            task=f"task {n}",
            requester_session_key=f"agent:{agent}:main",
            child_session_key=f"agent:{agent}:subagent:c{n}",
            run_id=f"run-{n}",
            running=True,
        )
    )


async def test_tasks_list_agent_id_status_list_and_sort_by(
    gw: RunningGateway, client: WireClient, clock: FakeClock
) -> None:
    tasks: list[TaskRecord] = []
    for n in range(4):
        clock.advance(10)
        tasks.append(await make_task(gw, n, "main" if n < 3 else "ops"))
    registry = gw.runtime.tasks
    # Ended in the reverse order of their creation: endedAt order differs from createdAt order.
    for task in reversed(tasks[:3]):
        clock.advance(10)
        await gw.runtime.call(registry.finish, task.task_id, "succeeded")
    ops = await client.ok("tasks.list", {"agentId": "ops"})
    assert [task["taskId"] for task in ops["tasks"]] == [tasks[3].task_id]
    by_created = await client.ok("tasks.list", {"agentId": "main"})
    assert [task["taskId"] for task in by_created["tasks"]] == [t.task_id for t in tasks[2::-1]]
    by_end = await client.ok(
        "tasks.list",
        {"agentId": "main", "status": ["completed", "failed"], "sortBy": "endedAt", "limit": 2},
    )
    assert [task["taskId"] for task in by_end["tasks"]] == [t.task_id for t in tasks[:2]]
    rest = await client.ok(
        "tasks.list",
        {
            "agentId": "main",
            "status": ["completed", "failed"],
            "sortBy": "endedAt",
            "limit": 2,
            "cursor": by_end["nextCursor"],
        },
    )
    assert ([task["taskId"] for task in rest["tasks"]], rest["nextCursor"]) == (
        [tasks[2].task_id],
        None,
    )
    active = await client.ok("tasks.list", {"status": ["queued", "running"]})
    assert [task["taskId"] for task in active["tasks"]] == [tasks[3].task_id]
    bad_status = await refused(client, "tasks.list", {"status": ["done"]})
    assert bad_status["message"].startswith("invalid tasks.list params: status must be one of")
    bad_sort = await refused(client, "tasks.list", {"sortBy": "createdAt"})
    assert bad_sort["message"] == (
        "invalid tasks.list params: sortBy must be one of 'updatedAt', 'endedAt'"
    )
    bad_cursor = await refused(client, "tasks.list", {"sortBy": "endedAt", "cursor": "zz"})
    assert bad_cursor["message"] == (
        "invalid or expired tasks.list cursor; restart pagination without a cursor"
    )


async def test_messages_subscribe_include_approvals(
    wire: Callable[..., Awaitable[WireClient]], client: WireClient
) -> None:
    subscribed = await client.ok(
        "sessions.messages.subscribe", {"key": "main", "includeApprovals": True}
    )
    assert (subscribed["key"], subscribed["approvalReplay"]) == ("agent:main:main", [])
    plain = await client.ok("sessions.messages.subscribe", {"key": "main"})
    assert "approvalReplay" not in plain
    reader = await wire()
    assert (await reader.connect(token=TOKEN, scopes=["operator.read"]))["ok"] is True
    assert await refused(
        reader, "sessions.messages.subscribe", {"key": "agent:main:x", "includeApprovals": True}
    ) == {
        "code": "INVALID_REQUEST",
        "message": "sessions.messages.subscribe includeApprovals requires a paired device and "
        "gateway scope: operator.approvals",
    }
    assert (
        await refused(
            client, "sessions.messages.subscribe", {"key": "main", "includeApprovals": False}
        )
    )[
        "message"
    ] == "invalid sessions.messages.subscribe params: includeApprovals must be one of True"


async def test_channels_status_has_openclaws_keys(client: WireClient) -> None:
    status = await client.ok("channels.status", {"probe": True, "timeoutMs": 8000})
    assert status["channelOrder"] == [row["channel"] for row in status["channels"]]
    assert "webchat" in status["channelOrder"]
    accounts = status["channelAccounts"]["webchat"]
    assert [account["accountId"] for account in accounts] == ["default"]
    assert status["channelDefaultAccountId"]["webchat"] == "default"
    assert status["channelLabels"]["webchat"] == "webchat"
    only = await client.ok("channels.status", {"channel": "webchat"})
    assert only["channelOrder"] == ["webchat"]
    assert (await refused(client, "channels.status", {"probe": "yes"}))["message"] == (
        "invalid channels.status params: probe must be a boolean"
    )


async def test_systems_and_plugin_catalog_pages_answer_empty(client: WireClient) -> None:
    assert await client.ok("environments.list", {"includeDesktopSetup": True}) == {
        "environments": []
    }
    assert await client.ok("plugins.catalog.browse", {"pageSize": 20}) == {"items": []}
    assert (await refused(client, "environments.list", {"workers": True}))["message"].startswith(
        "invalid environments.list params: unknown key 'workers'"
    )


async def test_sessions_list_archive_keys_and_chat_send_session_id(client: WireClient) -> None:
    await client.ok("sessions.patch", {"key": "agent:main:a", "label": "a"})
    every = {"excludeSystem": True, "archived": False, "archivedFilter": "active"}
    listed = await client.ok("sessions.list", every)
    assert [row["key"] for row in listed["sessions"]] == ["agent:main:a"]
    assert [
        r["key"] for r in (await client.ok("sessions.list", {"archived": "all"}))["sessions"]
    ] == ["agent:main:a"]
    # nothing is archived: asking for the archived ones only is an empty page
    for only in ({"archived": True}, {"archivedFilter": "archived"}):
        empty = await client.ok("sessions.list", only)
        assert (empty["sessions"], empty["count"]) == ([], 0)
    assert (await refused(client, "sessions.list", {"archived": "yes"}))["message"] == (
        'invalid sessions.list params: archived must be a boolean or "all"'
    )
    session_id = listed["sessions"][0]["sessionId"]
    sent = await client.ok(
        "chat.send",
        {
            "sessionKey": "agent:main:a",
            "sessionId": session_id,
            "message": "hi",
            "idempotencyKey": "ui-1",
        },
    )
    assert sent["status"] == "started"


async def test_chat_history_confirms_a_send_as_openclaws_ui_looks_for_it(
    client: WireClient,
) -> None:
    await converse(client, "agent:main:c", "first")
    plain = await client.ok("chat.history", {"sessionKey": "agent:main:c"})
    assert "inputReceipts" not in plain
    (user,) = [m for m in plain["messages"] if m["role"] == "user"]
    assert (user["runId"], user["idempotencyKey"]) == ("agent:main:c-0", "agent:main:c-0")
    asked = await client.ok(
        "chat.history",
        {"sessionKey": "agent:main:c", "sessionId": plain["sessionId"], "inputRunIds": ["x"]},
    )
    assert (asked["inputReceipts"], asked["inputConsumptions"]) == ([], [])
    too_many = {"sessionKey": "agent:main:c", "inputRunIds": [f"r{n}" for n in range(51)]}
    assert (await refused(client, "chat.history", too_many))["message"].startswith(
        "invalid chat.history params: inputRunIds"
    )


async def test_task_events_carry_openclaws_task_summary(
    gw: RunningGateway, client: WireClient
) -> None:
    await client.ok("sessions.messages.subscribe", {"key": "agent:main:main"})
    await client.ok("sessions.patch", {"key": "agent:main:main"})
    task = await make_task(gw, 7, "main")
    frame = await client.next_event("task")
    summary = frame["payload"]["task"]
    assert frame["payload"]["action"] == "upserted"
    assert {
        name: summary[name]
        for name in ("id", "taskId", "kind", "runtime", "status", "title", "sessionKey")
    } == {
        "id": task.task_id,
        "taskId": task.task_id,
        "kind": "subagent",
        "runtime": "subagent",
        "status": "running",
        "title": "task 7",
        "sessionKey": "agent:main:main",
    }
    assert summary["childSessionKey"] == "agent:main:subagent:c7"
    registry = gw.runtime.tasks
    await gw.runtime.call(lambda: registry.finish(task.task_id, "succeeded"))
    ended = await client.next_event("task", after=client.events.index(frame) + 1)
    assert ended["payload"]["task"]["status"] == "completed"  # OpenClaw's ledger name


async def test_resolve_by_reference_allow_missing_system_info_and_nodes(client: WireClient) -> None:
    await client.ok("sessions.patch", {"key": "agent:main:r", "label": "r"})
    found = await client.ok("sessions.resolve", {"reference": {"key": "agent:main:r"}})
    assert found == {"ok": True, "key": "agent:main:r"}
    missing = {"reference": {"key": "agent:main:nowhere"}, "allowMissing": True}
    assert await client.ok("sessions.resolve", missing) == {"ok": True, "missing": True}
    assert (await refused(client, "sessions.resolve", {"key": "agent:main:nowhere"}))[
        "message"
    ] == "No session found: agent:main:nowhere"
    assert (await refused(client, "sessions.resolve", {"reference": {"slug": "x"}}))[
        "message"
    ] == "invalid sessions.resolve params: reference.key must be a string"
    info = await client.ok("system.info", {})
    assert info["cpuCount"] >= 1
    assert info["memoryTotalBytes"] > info["memoryFreeBytes"] > 0
    assert info["runtimeVersion"].startswith("Python ")
    nodes = await client.ok("node.list", {})
    assert nodes["nodes"] == []
