"""session/list cursors that the bridge must refuse, with OpenClaw's texts, as -32602."""

from __future__ import annotations

import base64
import json
from typing import Any

import acp
import pytest

from clawline.acp.list_cursor import (
    CWD_MISMATCH,
    INVALID_CURSOR,
    RELATIVE_CWD,
    UNSUPPORTED_CURSOR,
    ListCursor,
    encode_cursor,
)
from clawline.store.base import SessionQuery
from clawline.store.cursor import CursorCodec, Position
from clawline.testing.live_gateway import RunningGateway
from tests.acp.conftest import BridgeFactory
from tests.acp.support import BridgeProcess, seed

OPENCLAW_OFFSET_CURSOR = "eyJ2IjoxLCJvZmZzZXQiOjEwMH0"  # {"v":1,"offset":100}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


async def refused(bridge: BridgeProcess, params: dict[str, Any]) -> str:
    with pytest.raises(acp.RequestError) as caught:
        await bridge.call("session/list", params)
    assert caught.value.code == -32602
    assert caught.value.data == {"details": str(caught.value)}
    return str(caught.value)


@pytest.fixture
async def listed(acp_bridge: BridgeFactory, acp_gateway: RunningGateway) -> BridgeProcess:
    await seed(acp_gateway, [(f"agent:main:chat-{n}", {}) for n in range(5)])
    lineage = {"spawnedBy": "agent:main:chat-0", "spawnedCwd": "/w/a"}
    await seed(acp_gateway, [(f"agent:main:subagent:s{n}", lineage) for n in range(5)])
    return await acp_bridge()


async def test_relative_cwd(listed: BridgeProcess) -> None:
    for cwd in ("w/a", "", "./w", "~/w"):
        assert await refused(listed, {"cwd": cwd}) == RELATIVE_CWD


INVALID = [
    "",
    "!!!",
    "not base64 at all",
    b64(b"not json"),
    b64(b"[1,2]"),
    b64(b'{"c":"x"}'),
    b64(b'{"v":"2","c":"x"}'),
    b64(b'{"v":2}'),
    b64(b'{"v":2,"c":""}'),
    b64(b'{"v":2,"c":7}'),
    b64(b'{"v":2,"c":"x","extra":1}'),
    b64(b'{"v":2,"c":"x","cwd":null}'),
    b64(b'{"v":2,"c":"x"}') + "=",  # padding
    b64(b'{"v":2,"c":"x"}')[:-2] + "+/",  # not the URL-safe alphabet
    b64(b'{"v":2, "c":"x"}'),  # not compact
    b64(b'{"c":"x","v":2}'),  # another key order
    b64(b'{"v":2,"c":"not a gateway cursor"}'),
]
UNSUPPORTED = [OPENCLAW_OFFSET_CURSOR, b64(b'{"v":1,"offset":0}'), b64(b'{"v":3,"c":"x"}')]


async def test_invalid_and_unsupported_cursors(listed: BridgeProcess) -> None:
    for cursor in INVALID:
        assert await refused(listed, {"cursor": cursor}) == INVALID_CURSOR, cursor
    for cursor in UNSUPPORTED:
        assert await refused(listed, {"cursor": cursor}) == UNSUPPORTED_CURSOR, cursor


async def test_tampered_cursor(listed: BridgeProcess) -> None:
    page = await listed.call("session/list", {"_meta": {"pageSize": 3}})
    outer = json.loads(unb64(page["nextCursor"]))
    inner = json.loads(unb64(outer["c"]))
    inner["u"] += 1  # another position under the same signature
    edited = b64(json.dumps(inner, separators=(",", ":")).encode())
    assert await refused(listed, {"cursor": encode_cursor(ListCursor(edited))}) == INVALID_CURSOR
    # a flipped character in the outer text
    text = page["nextCursor"]
    flipped = text[:10] + ("A" if text[10] != "A" else "B") + text[11:]
    assert await refused(listed, {"cursor": flipped}) == INVALID_CURSOR
    # the original still works
    assert (await listed.call("session/list", {"cursor": page["nextCursor"]}))["sessions"]


async def test_cursor_from_another_store(listed: BridgeProcess) -> None:
    fingerprint = SessionQuery(include_global=False, include_unknown=False).fingerprint()
    foreign = CursorCodec(b"another store's secret").encode(
        Position(1_800_000_000_000, "agent:main:chat-1"), fingerprint
    )
    assert await refused(listed, {"cursor": encode_cursor(ListCursor(foreign))}) == INVALID_CURSOR


async def test_cursor_and_cwd_filter_must_agree(listed: BridgeProcess) -> None:
    filtered = await listed.call("session/list", {"cwd": "/w/a", "_meta": {"pageSize": 2}})
    unfiltered = await listed.call("session/list", {"_meta": {"pageSize": 2}})
    assert await refused(listed, {"cursor": filtered["nextCursor"]}) == CWD_MISMATCH
    with_other = {"cursor": filtered["nextCursor"], "cwd": "/w/b"}
    assert await refused(listed, with_other) == CWD_MISMATCH
    assert (
        await refused(listed, {"cursor": unfiltered["nextCursor"], "cwd": "/w/a"}) == CWD_MISMATCH
    )
    # the gateway cursor of a filtered walk, re-wrapped without the filter: another query
    inner = json.loads(unb64(filtered["nextCursor"]))["c"]
    assert await refused(listed, {"cursor": encode_cursor(ListCursor(inner))}) == INVALID_CURSOR
    ok = await listed.call("session/list", {"cursor": filtered["nextCursor"], "cwd": "/w/a"})
    assert len(ok["sessions"]) == 3  # the other three of the five in /w/a
