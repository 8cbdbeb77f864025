"""``clawline acp`` answers every line per JSON-RPC 2.0 (real subprocess, raw bytes on stdin).

Each malformed line gets its error — ``-32700`` with ``id: null`` for what is not JSON,
``-32600`` for what is not a valid Request object (with the request's id when that is valid) —
the answer validates against the ACP schema, the bridge serves a valid request afterwards, and
nothing is logged as a traceback.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from clawline.acp.stdio_server import STDIN_LIMIT
from clawline.testing.live_gateway import RunningGateway
from tests.acp.raw_bridge import RawBridge, peak_rss, raw_bridge
from tests.acp.schema_check import check_message

INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}

Case = tuple[str, bytes, int, object]
"""(name, line without newline, expected code, expected id)."""

PARSE_ERRORS: list[Case] = [
    ("truncated JSON", b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "par', -32700, None),
    ("invalid UTF-8", b'{"jsonrpc": "2.0", "id": 2, "method": "\xff\xfe"}', -32700, None),
    ("2,000-deep nesting", b'{"jsonrpc":"2.0","id":3,"params":' + b"[" * 2000, -32700, None),
    ("2,000-deep, closed", b"[" * 2000 + b"]" * 2000, -32700, None),
    ("lone surrogate", b'{"jsonrpc": "2.0", "id": 4, "method": "\\ud800"}', -32700, None),
    ("not JSON at all", b"hello", -32700, None),
]


def _line(**members: object) -> bytes:
    return orjson.dumps(members)


INVALID_REQUESTS: list[Case] = [
    ("method []", _line(jsonrpc="2.0", id=10, method=[]), -32600, 10),
    ("method {}", _line(jsonrpc="2.0", id=11, method={}), -32600, 11),
    ("method null", _line(jsonrpc="2.0", id=12, method=None), -32600, 12),
    ("method 1", _line(jsonrpc="2.0", id="s13", method=1), -32600, "s13"),
    ("method missing", _line(jsonrpc="2.0", id=14, params={}), -32600, 14),
    ("jsonrpc missing", _line(id=15, method="initialize", params=INITIALIZE), -32600, 15),
    ("jsonrpc 1.0", _line(jsonrpc="1.0", id=16, method="initialize"), -32600, 16),
    ("jsonrpc 2.0 number", _line(jsonrpc=2.0, id=17, method="initialize"), -32600, 17),
    ("params a string", _line(jsonrpc="2.0", id=18, method="initialize", params="x"), -32600, 18),
    ("params a number", _line(jsonrpc="2.0", id=19, method="session/list", params=1), -32600, 19),
    ("id true", _line(jsonrpc="2.0", id=True, method="initialize"), -32600, None),
    ("id an object", _line(jsonrpc="2.0", id={"n": 1}, method="initialize"), -32600, None),
    ("id an array", _line(jsonrpc="2.0", id=[1], method="initialize"), -32600, None),
    ("id a fraction", _line(jsonrpc="2.0", id=1.5, method="initialize"), -32600, None),
    ("id beyond int64", b'{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}', -32600, None),
    ("not an object", b'"initialize"', -32600, None),
    ("a number", b"42", -32600, None),
    ("null", b"null", -32600, None),
    # not a valid Request object, so not a notification: answered, with id null
    ("no id, method 1", _line(jsonrpc="2.0", method=1, params="bar"), -32600, None),
    (
        "no id, params a string",
        _line(jsonrpc="2.0", method="session/cancel", params="x"),
        -32600,
        None,
    ),
    ("no id, jsonrpc missing", _line(method="session/cancel", params={}), -32600, None),
    ("batch", b'[{"jsonrpc":"2.0","id":20,"method":"initialize","params":{}}]', -32600, None),
    ("empty batch", b"[]", -32600, None),
]


def _check_answer(name: str, answer: dict[str, object], code: int, request_id: object) -> None:
    assert answer.get("jsonrpc") == "2.0", name
    assert "id" in answer, name
    assert answer["id"] == request_id, name
    assert type(answer["id"]) is type(request_id), name
    error = answer.get("error")
    assert isinstance(error, dict), (name, answer)
    assert error["code"] == code, (name, answer)
    assert error["message"] == ("Parse error" if code == -32700 else "Invalid Request"), name
    assert isinstance(error["data"], dict), name
    assert isinstance(error["data"]["details"], str), name
    assert error["data"]["details"], name
    assert check_message("agent", answer, None) is None, (
        name,
        check_message("agent", answer, None),
    )


async def _still_serves(bridge: RawBridge, request_id: int) -> None:
    """The next message is the answer to a valid request (so nothing else was answered)."""
    await bridge.send(
        {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": INITIALIZE}
    )
    answer = await bridge.receive()
    assert answer["id"] == request_id, answer
    assert answer["result"]["protocolVersion"] == 1
    assert check_message("agent", answer, "initialize") is None


def _no_traceback(bridge: RawBridge) -> None:
    text = bridge.stderr_text()
    assert "Traceback" not in text, text
    assert "TypeError" not in text, text


@pytest.mark.parametrize(
    "cases", [PARSE_ERRORS, INVALID_REQUESTS], ids=["parse errors", "invalid requests"]
)
async def test_each_malformed_line_is_answered(
    acp_gateway: RunningGateway, tmp_path: Path, cases: list[Case]
) -> None:
    async with raw_bridge(acp_gateway.url, tmp_path) as bridge:
        for number, (name, line, code, request_id) in enumerate(cases):
            await bridge.write(line + b"\n")
            _check_answer(name, await bridge.receive(), code, request_id)
            await _still_serves(bridge, 1000 + number)
        _no_traceback(bridge)


NOT_ANSWERED: list[object] = [
    # valid notifications, even with an unknown method or wrong params
    {"jsonrpc": "2.0", "method": "no/such/notification", "params": {}},
    {"jsonrpc": "2.0", "method": "session/cancel", "params": {"wrong": "shape"}},
    {"jsonrpc": "2.0", "method": "session/cancel", "params": ["positional"]},
    {"jsonrpc": "2.0", "method": "session/cancel", "params": None},
    {"jsonrpc": "2.0", "method": "session/cancel"},
    # responses (a result or an error, no method), well-formed or not
    {"jsonrpc": "2.0", "id": 77, "result": {}},
    {"jsonrpc": "2.0", "id": 78, "error": {"code": -32603, "message": "x"}},
    {"jsonrpc": "2.0", "id": 79, "result": {}, "error": {"code": 1, "message": "both"}},
    {"jsonrpc": "1.0", "id": 80, "result": {}},
    {"jsonrpc": "2.0", "id": [81], "result": {}},
    {"jsonrpc": "2.0", "result": {}},
]


async def test_notifications_responses_and_blank_lines_get_no_answer(
    acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    """JSON-RPC never replies to a notification; an answer to a response could ping-pong
    between two peers; blank lines are not messages."""
    async with raw_bridge(acp_gateway.url, tmp_path) as bridge:
        for number, message in enumerate(NOT_ANSWERED):
            await bridge.send(message)
            await _still_serves(bridge, number)
        await bridge.write(b"\n   \n\r\n\t\n")
        await _still_serves(bridge, len(NOT_ANSWERED))
        _no_traceback(bridge)


async def test_valid_envelopes_take_the_sdk_path(
    acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    """``params: null`` or absent is no params (the ACP schema allows null); an array is a valid
    envelope whose params the method refuses (``-32602``); a null id is answered with null."""
    async with raw_bridge(acp_gateway.url, tmp_path) as bridge:
        await bridge.send({"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": None})
        listed = await bridge.receive()
        assert listed["id"] == 1
        assert listed["result"] == {"sessions": []}
        await bridge.send({"jsonrpc": "2.0", "id": "two", "method": "session/list"})
        assert (await bridge.receive())["result"] == {"sessions": []}
        await bridge.send({"jsonrpc": "2.0", "id": 3, "method": "session/list", "params": []})
        positional = await bridge.receive()
        assert positional["id"] == 3
        assert positional["error"]["code"] == -32602
        await bridge.send({"jsonrpc": "2.0", "id": None, "method": "session/list", "params": {}})
        null_id = await bridge.receive()
        assert "id" in null_id
        assert null_id["id"] is None
        assert null_id["result"] == {"sessions": []}
        await bridge.send({"jsonrpc": "2.0", "id": 4, "method": "no/such/method", "params": {}})
        assert (await bridge.receive())["error"]["code"] == -32601
        for answer, method in [
            (listed, "session/list"),
            (positional, None),
            (null_id, "session/list"),
        ]:
            assert check_message("agent", answer, method) is None
        _no_traceback(bridge)


PEAK_MARGIN = 32 * 1024 * 1024
"""Memory the bridge may take beyond the line limit while refusing an overlong line (the
bytearray's growth, the stream's buffer)."""


async def test_a_200_mb_line_is_refused_without_being_held(
    acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    chunk = b"x" * (1 << 20)
    async with raw_bridge(acp_gateway.url, tmp_path) as bridge:
        await _still_serves(bridge, 1)
        before = peak_rss(bridge.process.pid)
        # valid JSON if it were read: only its length gets it refused
        await bridge.write(b'{"jsonrpc":"2.0","id":2,"method":"initialize","params":{')
        await bridge.write(b'"protocolVersion":1,"_meta":{"pad":"')
        for _ in range(200):
            await bridge.write(chunk)
        await bridge.write(b'"}}}\n')
        answer = await bridge.receive()
        _check_answer("200 MB line", answer, -32700, None)
        assert str(STDIN_LIMIT) in answer["error"]["data"]["details"]
        await _still_serves(bridge, 3)  # the rest of the stream works
        grown = peak_rss(bridge.process.pid) - before
        assert grown < STDIN_LIMIT + PEAK_MARGIN, f"peak RSS grew by {grown / 2**20:.0f} MiB"
        _no_traceback(bridge)


async def test_a_line_just_under_the_limit_is_served(
    acp_gateway: RunningGateway, tmp_path: Path
) -> None:
    head = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,'
    tail = b'"_meta":{"pad":"' + b"x" * (STDIN_LIMIT - len(head) - 100) + b'"}}}'
    assert STDIN_LIMIT - 100 < len(head + tail) <= STDIN_LIMIT
    async with raw_bridge(acp_gateway.url, tmp_path) as bridge:
        await bridge.write(head + tail + b"\n")
        answer = await bridge.receive()
        assert answer["id"] == 1
        assert answer["result"]["protocolVersion"] == 1
