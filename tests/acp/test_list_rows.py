"""The pure parts of listing and streaming: row mapping, lineage ``_meta``, cursors, text diffs."""

from __future__ import annotations

import base64
from typing import Any

import acp
import pytest

from clawline.acp.list_cursor import (
    CWD_MISMATCH,
    INVALID_CURSOR,
    ListCursor,
    decode_cursor,
    encode_cursor,
)
from clawline.acp.listing import page_size
from clawline.acp.meta import iso_time, lineage_meta, session_info
from clawline.acp.prompt import strip_cwd_prefix
from clawline.acp.run_updates import unsent_tail
from tests.acp.schema_check import traffic_problems

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def row(**fields: Any) -> dict[str, Any]:
    return {"key": "agent:main:subagent:x", **fields}


def test_meta_keeps_valid_fields_only() -> None:
    full = row(
        kind="direct",
        channel=" telegram ",
        parentSessionKey="agent:main:p",
        spawnedBy="agent:main:s",
        spawnDepth=2,
        subagentRole="leaf",
        subagentControlScope="none",
        spawnedWorkspaceDir="/w",
        spawnedCwd="/w/c",
        rootSessionKey="agent:main:r",
        traceId="t1",
        lineage={"parent": "agent:main:p", "path": "/agent:main:r/x", "depth": 2},
        label="ignored",
    )
    assert lineage_meta(full) == {
        "sessionKey": "agent:main:subagent:x",
        "kind": "direct",
        "channel": "telegram",
        "parentSessionId": "agent:main:p",  # parentSessionKey before spawnedBy
        "spawnedBy": "agent:main:s",
        "spawnDepth": 2,
        "subagentRole": "leaf",
        "subagentControlScope": "none",
        "spawnedWorkspaceDir": "/w",
        "spawnedCwd": "/w/c",
        "rootSessionKey": "agent:main:r",
        "traceId": "t1",
        "lineage": {"parent": "agent:main:p", "path": "/agent:main:r/x", "depth": 2},
    }
    junk = row(
        kind="",
        channel=3,
        parentSessionKey="  ",
        spawnedBy=" agent:main:s ",
        spawnDepth=-1,
        subagentRole="boss",
        subagentControlScope=True,
        spawnedWorkspaceDir=None,
        spawnedCwd="",
        rootSessionKey=None,
        traceId=7,
        lineage={"parent": None, "path": "/x", "depth": "0"},
    )
    assert lineage_meta(junk) == {
        "sessionKey": "agent:main:subagent:x",
        "parentSessionId": "agent:main:s",
        "spawnedBy": "agent:main:s",
    }
    assert lineage_meta(row(spawnDepth=True))["sessionKey"] == "agent:main:subagent:x"
    assert "spawnDepth" not in lineage_meta(row(spawnDepth=True))
    assert lineage_meta(row(spawnDepth=0))["spawnDepth"] == 0


def test_session_info_mapping() -> None:
    assert session_info(row(updatedAt=1_790_000_000_123), "/bridge") == {
        "sessionId": "agent:main:subagent:x",
        "cwd": "/bridge",
        "title": "agent:main:subagent:x",
        "updatedAt": "2026-09-21T14:13:20.123Z",
        "_meta": {"sessionKey": "agent:main:subagent:x"},
    }
    both = row(spawnedCwd="/c", spawnedWorkspaceDir="/w", updatedAt=None)
    assert session_info(both, "/b")["cwd"] == "/c"
    assert "updatedAt" not in session_info(both, "/b")
    assert session_info(row(spawnedWorkspaceDir="/w"), "/b")["cwd"] == "/w"
    titles = [
        (row(derivedTitle="D", displayName="N", label="L"), "D"),
        (row(displayName="N", label="L"), "N"),
        (row(label="L"), "L"),
        (row(derivedTitle="[Working directory: ~/p] fix the bug"), "fix the bug"),
        (row(derivedTitle="[Working directory: /very/long/path/that/got/clip…", label="L"), "L"),
        (row(derivedTitle="  "), "agent:main:subagent:x"),
    ]
    for mapped, title in titles:
        assert session_info(mapped, "/b")["title"] == title


def test_iso_time() -> None:
    assert iso_time(0) == "1970-01-01T00:00:00.000Z"
    assert iso_time(1_790_000_000_005) == "2026-09-21T14:13:20.005Z"
    for bad in (None, -1, 1.5, "1", True, 10**20):
        assert iso_time(bad) is None


def test_page_size() -> None:
    assert page_size({}) == 100
    assert page_size({"pageSize": 10, "limit": 20}) == 10
    assert page_size({"pageSize": "10", "limit": 20}) == 20
    assert page_size({"limit": 1e9}) == 100
    assert page_size({"limit": float("nan")}) == 100
    assert page_size({"limit": 0.5}) == 1


def test_cursor_round_trip_and_canonical_form() -> None:
    for cursor in (ListCursor("abc"), ListCursor("abc", "/w/ä")):
        text = encode_cursor(cursor)
        assert "=" not in text
        assert decode_cursor(text, cursor.cwd) == cursor
    payload = base64.urlsafe_b64decode(encode_cursor(ListCursor("ab", "/w")) + "==")
    assert payload == b'{"v":2,"c":"ab","cwd":"/w"}'
    # base64 with non-zero padding bits decodes to the same bytes but is not canonical
    text = encode_cursor(ListCursor("xy"))
    assert len(text) % 4 in (2, 3)
    sloppy = text[:-1] + ALPHABET[ALPHABET.index(text[-1]) + 1]
    with pytest.raises(acp.RequestError) as caught:
        decode_cursor(sloppy, None)
    assert str(caught.value) == INVALID_CURSOR
    with pytest.raises(acp.RequestError) as mismatch:
        decode_cursor(encode_cursor(ListCursor("ab", "/w")), "/W")
    assert str(mismatch.value) == CWD_MISMATCH
    with pytest.raises(acp.RequestError):
        decode_cursor("A" * 9000, None)


def test_unsent_tail() -> None:
    assert unsent_tail("", "hello") == "hello"
    assert unsent_tail("hel", "hello") == "lo"
    assert unsent_tail("hello", "hello") == ""
    # a turn with tool rounds: the final message is the last round only
    assert unsent_tail("first round\n\nsecond ro", "second round") == "und"
    assert unsent_tail("first round\n\nsecond round", "second round") == ""
    assert unsent_tail("first round", "second") == "second"
    assert unsent_tail("abc", "") == ""
    assert unsent_tail("aaaa", "aaab") == "b"


def test_strip_cwd_prefix() -> None:
    assert strip_cwd_prefix("[Working directory: ~/p]\n\nhi") == "hi"
    assert strip_cwd_prefix("[Working directory: /a]b]\n\nhi") == "hi"
    assert (
        strip_cwd_prefix("[Working directory: /a\nb]\n\nhi") == "[Working directory: /a\nb]\n\nhi"
    )
    assert strip_cwd_prefix("plain") == "plain"


def test_the_schema_check_catches_bad_messages() -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}

    def answer(result: object) -> list[str]:
        reply = {"jsonrpc": "2.0", "id": 1, "result": result}
        return traffic_problems([("client", listing), ("agent", reply)])

    assert answer({"sessions": [{"sessionId": "k", "cwd": "/w"}]}) == []
    assert answer({"sessions": [{"sessionId": "k"}]})  # cwd is required
    assert answer({"sessions": [{"sessionId": "k", "cwd": "/w", "updatedAt": 17}]})
    assert answer({"nextCursor": "x"})  # sessions is required
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    good = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "k", "update": update},
    }
    assert traffic_problems([("agent", good)]) == []
    bad = {**good, "params": {"sessionId": "k", "update": {**update, "sessionUpdate": "nope"}}}
    assert traffic_problems([("agent", bad)])
    # a bad request the agent refused is fine; one it answered is not
    wrong = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/w"}}
    refused = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Invalid params"}}
    accepted = {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "k"}}
    assert traffic_problems([("client", wrong), ("agent", refused)]) == []
    assert traffic_problems([("client", wrong), ("agent", accepted)])
    assert traffic_problems([("agent", {"jsonrpc": "2.0", "id": 9, "result": {}})])  # unknown id
    assert traffic_problems([("agent", {"id": 2, "result": {}})])  # no jsonrpc
