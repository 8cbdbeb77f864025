"""Where the ACP schema is stricter than the SDK's models, the bridge follows the schema."""

from __future__ import annotations

from pathlib import Path

import acp
import pytest

from clawline.acp.list_cursor import RELATIVE_CWD
from clawline.acp.strict import BAD_PROTOCOL_VERSION, relative_cwd
from clawline.testing.live_gateway import RunningGateway
from tests.acp.conftest import BridgeFactory
from tests.acp.support import seed

PROTOCOL_VERSIONS: list[tuple[object, str]] = [
    # the SDK's model would read all of these as a version (1, or the number)
    ("x", BAD_PROTOCOL_VERSION),
    ("1", BAD_PROTOCOL_VERSION),
    (True, BAD_PROTOCOL_VERSION),
    (1.5, BAD_PROTOCOL_VERSION),
    (1.0, BAD_PROTOCOL_VERSION),
    (None, BAD_PROTOCOL_VERSION),
    ([1], BAD_PROTOCOL_VERSION),
    # the model's own range check
    (-1, "Invalid params"),
    (65536, "Invalid params"),
]
RELATIVE_CWDS = ["relative/dir", ".", "", "~/repo", "C:\\work"]


async def test_initialize_needs_an_integer_protocol_version(acp_bridge: BridgeFactory) -> None:
    bridge = await acp_bridge()
    for version, message in PROTOCOL_VERSIONS:
        with pytest.raises(acp.RequestError) as caught:
            await bridge.call("initialize", {"protocolVersion": version, "clientCapabilities": {}})
        assert (caught.value.code, str(caught.value)) == (-32602, message), version
    with pytest.raises(acp.RequestError) as renamed:
        await bridge.call("initialize", {"protocol_version": 1})  # not the schema's name
    assert renamed.value.code == -32602
    # the connection is not harmed, and the bounds themselves are versions
    for version in (0, 1, 65535):
        answer = await bridge.call("initialize", {"protocolVersion": version})
        assert answer["protocolVersion"] == 1


async def test_session_methods_need_an_absolute_cwd(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    await seed(acp_gateway, [("agent:main:work", {"label": "Work"})])
    bridge = await acp_bridge()
    for cwd in RELATIVE_CWDS:
        calls: list[tuple[str, dict[str, object]]] = [
            ("session/new", {"cwd": cwd, "mcpServers": []}),
            ("session/load", {"sessionId": "agent:main:work", "cwd": cwd, "mcpServers": []}),
            ("session/resume", {"sessionId": "agent:main:work", "cwd": cwd}),
            ("session/list", {"cwd": cwd}),
        ]
        for method, params in calls:
            with pytest.raises(acp.RequestError) as caught:
                await bridge.call(method, params)
            assert caught.value.code == -32602, (method, cwd)
            assert str(caught.value) == relative_cwd(method)
            assert caught.value.data == {"details": relative_cwd(method)}
    # nothing was opened: a prompt on the key is an unknown session
    with pytest.raises(acp.RequestError) as unknown:
        await bridge.call(
            "session/prompt",
            {"sessionId": "agent:main:work", "prompt": [{"type": "text", "text": "hi"}]},
        )
    assert unknown.value.code == -32002
    # absolute ones are still fine
    assert (await bridge.new_session(str(tmp_path))).startswith("agent:main:acp-bridge:")
    params = {"sessionId": "agent:main:work", "cwd": "/w", "mcpServers": []}
    assert await bridge.call("session/load", params) == {}
    assert await bridge.call("session/resume", {"sessionId": "agent:main:work", "cwd": "/w"}) == {}


def test_session_list_keeps_openclaws_text() -> None:
    assert (
        relative_cwd("session/list") == RELATIVE_CWD == "ACP session/list requires an absolute cwd."
    )
