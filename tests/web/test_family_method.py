"""``web.family`` over the wire: the family operation of clawline.acp_client.family_loader, run
through an ACP link to the gateway's own bridge subprocess (started on first use, stopped with the
gateway)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clawline.gateway.methods.web import family_service
from clawline.testing.live_gateway import RunningGateway
from clawline.testing.waiting import eventually
from clawline.web.acp_family import bridge_target
from tests.gateway.wire import WireClient
from tests.web.conftest import TOKEN

ROOT, CHILD, GRANDCHILD = "agent:main:web", "agent:main:subagent:c1", "agent:main:subagent:g1"
OTHER = "agent:main:acp:a1"


@pytest.fixture
async def client(web_gateway: RunningGateway) -> AsyncIterator[WireClient]:
    opened = await WireClient.open(web_gateway.url, "/ws")
    try:
        assert (await opened.connect(token=TOKEN, scopes=["operator.read"]))["ok"] is True
        yield opened
    finally:
        await opened.close()


async def seed(gateway: RunningGateway) -> None:
    catalog = gateway.runtime.catalog

    def write() -> None:
        catalog.patch(ROOT, {"label": "Root"})
        catalog.patch(CHILD, {"spawnedBy": ROOT, "spawnDepth": 1, "displayName": "Child"})
        catalog.patch(GRANDCHILD, {"spawnedBy": CHILD, "spawnDepth": 2})
        catalog.patch(OTHER, {"spawnedBy": ROOT})

    await gateway.runtime.call(write)


async def family(client: WireClient, params: dict[str, Any]) -> dict[str, Any]:
    frame = await client.call("web.family", params)
    assert frame["ok"] is True, frame
    payload: dict[str, Any] = frame["payload"]
    return payload


async def test_family_from_acp(web_gateway: RunningGateway, client: WireClient) -> None:
    await seed(web_gateway)
    service = family_service(web_gateway.gateway)
    assert not service.started
    result = await family(client, {"sessionKey": ROOT})
    assert result["success"] is True
    assert result["current"]["sessionKey"] == ROOT
    assert [(m["sessionKey"], m["title"], m["parentSessionKey"]) for m in result["children"]] == [
        (CHILD, "Child", ROOT)
    ]
    nested = await family(client, {"sessionKey": CHILD})
    assert nested["current"]["parentSessionKey"] == ROOT
    assert [m["sessionKey"] for m in nested["children"]] == [GRANDCHILD]
    assert len(service.processes) == 1  # one bridge, reused
    unknown = await family(client, {"sessionKey": "agent:main:nobody"})
    assert unknown == {"success": True, "current": None, "children": []}


@pytest.mark.parametrize("params", [{}, {"sessionKey": "main"}, {"sessionKey": "agent:"}])
async def test_an_invalid_payload_fails_without_a_bridge(
    web_gateway: RunningGateway, client: WireClient, params: dict[str, Any]
) -> None:
    result = await family(client, params)
    assert result == {
        "success": False,
        "current": None,
        "children": [],
        "error": "Invalid ACP session family payload",
    }
    assert not family_service(web_gateway.gateway).started


async def test_params_are_closed_and_need_read(web_gateway: RunningGateway) -> None:
    opened = await WireClient.open(web_gateway.url, "/ws")
    try:
        hello = await opened.connect(token=TOKEN, scopes=[])
        assert "web.family" in hello["payload"]["features"]["methods"]
        refused = await opened.call("web.family", {"sessionKey": ROOT})
        assert refused["ok"] is False
        assert refused["error"]["message"] == "missing scope: operator.read"
    finally:
        await opened.close()
    assert not family_service(web_gateway.gateway).started


async def test_unknown_params_are_refused(client: WireClient) -> None:
    frame = await client.call("web.family", {"sessionKey": ROOT, "cwd": "/"})
    assert frame["ok"] is False
    assert frame["error"]["code"] == "INVALID_REQUEST"
    assert "unknown key 'cwd'" in frame["error"]["message"]


async def test_the_bridge_stops_with_the_gateway(
    web_gateway: RunningGateway, client: WireClient
) -> None:
    service = family_service(web_gateway.gateway)
    assert (await family(client, {"sessionKey": ROOT}))["success"] is True
    (process,) = service.processes
    await web_gateway.gateway.run_shutdown_callbacks()
    assert process.returncode is not None
    after = await family(client, {"sessionKey": ROOT})
    assert after["success"] is False
    assert after["error"] == "the gateway is stopping"


def test_the_bridge_is_started_from_explicit_parts(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="not serving yet"):
        bridge_target(url=None, state_dir=tmp_path, token=None)
    target = bridge_target(url="ws://0.0.0.0:4100", state_dir=tmp_path, token="s3cret-token")
    assert target.url == "ws://127.0.0.1:4100"  # a gateway bound everywhere, reached on loopback
    command = target.command()
    assert command[-2:] == ["--url", "ws://127.0.0.1:4100"]
    assert command[command.index("--state-dir") + 1] == str(tmp_path)
    assert "s3cret-token" not in " ".join(command)  # the token travels in the environment
    assert target.environment() == {"CLAWLINE_GATEWAY_TOKEN": "s3cret-token"}
    assert bridge_target(url="ws://h:1", state_dir=tmp_path, token=None).environment() == {}


def running_bridges(gateway: RunningGateway) -> list[int]:
    """Live processes of the bridge of ``gateway`` (``… acp --url ws://…:<port>``), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # gone meanwhile
        if b"acp" not in argv or b"--url" not in argv or state == "Z":
            continue
        url = argv[argv.index(b"--url") + 1] if argv.index(b"--url") + 1 < len(argv) else b""
        if url.rstrip(b"/").endswith(f":{gateway.port}".encode()):
            found.append(int(entry.name))
    return found


async def test_closing_while_a_request_runs_leaves_no_bridge(
    web_gateway: RunningGateway, client: WireClient
) -> None:
    """The gateway stopping while a family request is on its way: the request finishes, the
    bridge stops, and none is started again behind the closed family's back."""
    await seed(web_gateway)
    service = family_service(web_gateway.gateway)
    asked = asyncio.create_task(family(client, {"sessionKey": ROOT}))
    await eventually(lambda: service.started)  # the bridge is starting for this request
    assert not asked.done()
    await web_gateway.gateway.run_shutdown_callbacks()
    result = await asked
    assert running_bridges(web_gateway) == []
    assert result["success"] is True
