"""Frames and limits over a real socket: every bad frame gets a typed error and the connection
survives; oversized frames; too many requests in flight."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import websockets

from clawline.gateway.frames import MAX_ID_LENGTH, MAX_PAYLOAD
from clawline.gateway.options import GatewaySettings
from clawline.gateway.registry import Call
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.types import JSON
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

Wire = Callable[..., Awaitable[WireClient]]


def invalid(frame: dict[str, Any], request_id: str | None) -> str:
    assert frame["type"] == "res"
    assert frame["id"] == request_id
    assert frame["ok"] is False, frame
    assert frame["error"]["code"] == "INVALID_REQUEST"
    return str(frame["error"]["message"])


async def still_works(client: WireClient) -> None:
    assert (await client.ok("health"))["ok"] is True
    assert not client.closed.done()


LONG_ID = "i" * (MAX_ID_LENGTH + 1)

BAD_FRAMES: list[tuple[str, str | bytes, str | None, str]] = [
    ("not json", "{nope", None, "invalid frame: not valid JSON"),
    ("empty text", "", None, "invalid frame: not valid JSON"),
    ("array", "[1, 2]", None, "invalid frame: expected a JSON object"),
    ("string", '"req"', None, "invalid frame: expected a JSON object"),
    ("number", "42", None, "invalid frame: expected a JSON object"),
    ("null", "null", None, "invalid frame: expected a JSON object"),
    ("missing id", '{"type":"req","method":"health"}', None, "id must be"),
    ("empty id", '{"type":"req","id":"","method":"health"}', None, "id must be"),
    ("numeric id", '{"type":"req","id":7,"method":"health"}', None, "id must be"),
    ("null id", '{"type":"req","id":null,"method":"health"}', None, "id must be"),
    (
        "too-long id",
        json.dumps({"type": "req", "id": LONG_ID, "method": "health"}),
        None,
        "id must be",
    ),
    ("type res", '{"type":"res","id":"t1","method":"health"}', "t1", 'type must be "req"'),
    ("no type", '{"id":"t2","method":"health"}', "t2", 'type must be "req"'),
    ("type event, no id", '{"type":"event","event":"x"}', None, 'type must be "req"'),
    ("method number", '{"type":"req","id":"m1","method":5}', "m1", "method must be"),
    ("method missing", '{"type":"req","id":"m2"}', "m2", "method must be"),
    ("method empty", '{"type":"req","id":"m3","method":""}', "m3", "method must be"),
    (
        "method too long",
        json.dumps({"type": "req", "id": "m4", "method": "x" * 200}),
        "m4",
        "method must be",
    ),
    (
        "unknown field",
        '{"type":"req","id":"u1","method":"health","extra":1}',
        "u1",
        "invalid frame: unknown field 'extra'",
    ),
    ("binary", b'{"type":"req","id":"b1","method":"health"}', None, "binary"),
    ("unknown method", '{"type":"req","id":"x1","method":"nope"}', "x1", "unknown method: nope"),
    (
        "params array",
        '{"type":"req","id":"p1","method":"health","params":[]}',
        "p1",
        "invalid health params: params must be an object",
    ),
    (
        "params string",
        '{"type":"req","id":"p2","method":"health","params":"x"}',
        "p2",
        "invalid health params: params must be an object",
    ),
    (
        "closed schema",
        '{"type":"req","id":"s1","method":"health","params":{"verbose":true}}',
        "s1",
        "invalid health params: unknown key 'verbose'",
    ),
    (
        "bad param type",
        '{"type":"req","id":"s2","method":"events.replay","params":{"afterSeq":"0"}}',
        "s2",
        "invalid events.replay params: afterSeq must be an integer",
    ),
]


@pytest.mark.parametrize(
    ("data", "request_id", "message"),
    [case[1:] for case in BAD_FRAMES],
    ids=[case[0] for case in BAD_FRAMES],
)
async def test_a_bad_frame_gets_a_typed_error_and_the_connection_survives(
    client: WireClient, data: str | bytes, request_id: str | None, message: str
) -> None:
    await client.ws.send(data)
    assert message in invalid(await client.response(request_id), request_id)
    await still_works(client)


async def test_all_bad_frames_in_a_row_on_one_connection(client: WireClient) -> None:
    for _, data, request_id, message in BAD_FRAMES:
        await client.ws.send(data)
        assert message in invalid(await client.response(request_id), request_id)
    await still_works(client)


async def test_an_id_at_the_length_limit_is_accepted(client: WireClient) -> None:
    request_id = "i" * MAX_ID_LENGTH
    await client.send({"type": "req", "id": request_id, "method": "health"})
    frame = await client.response(request_id)
    assert frame["ok"] is True


async def test_params_null_or_absent_count_as_empty(client: WireClient) -> None:
    await client.send({"type": "req", "id": "n1", "method": "health", "params": None})
    assert (await client.response("n1"))["ok"] is True
    await client.send({"type": "req", "id": "n2", "method": "health"})
    assert (await client.response("n2"))["ok"] is True


async def test_params_must_be_an_object_for_a_method_without_a_schema(
    gw: RunningGateway, client: WireClient
) -> None:
    async def open_params(call: Call) -> JSON:
        return {"params": call.params}

    gw.gateway.methods.add("test.open", open_params, scope=None)
    assert await client.ok("test.open", {"any": 1}) == {"params": {"any": 1}}
    frame = await client.call("test.open", [1])
    assert invalid(frame, frame["id"]) == "invalid test.open params: params must be an object"
    await still_works(client)


async def test_responses_carry_the_request_id_and_nothing_else(client: WireClient) -> None:
    await client.send({"type": "req", "id": "exact-id", "method": "health", "params": {}})
    frame = await client.response("exact-id")
    assert set(frame) == {"type", "id", "ok", "payload"}


# --- frame size limits ---------------------------------------------------------------------


def padded_health(request_id: str, size: int) -> str:
    """A ``health`` request of exactly ``size`` bytes, padded in ``params.p`` (which the closed
    schema refuses once the frame is read; the size check comes first)."""
    head = json.dumps({"type": "req", "id": request_id, "method": "health", "params": {"p": ""}})
    return head[:-3] + "x" * (size - len(head)) + '"}}'


async def test_a_preauth_frame_over_64_kib_is_refused_and_closed_1009(wire: Wire) -> None:
    client = await wire()
    await client.send(padded_health("big", 64 * 1024 + 1))
    frame = await client.response(None)
    assert "exceeds the limit of 65536 bytes" in invalid(frame, None)
    await asyncio.wait_for(client.closed, 5)
    assert client.ws.close_code == 1009


async def test_a_preauth_connect_at_64_kib_is_read(wire: Wire) -> None:
    client = await wire()
    await client.send(padded_health("at-limit", 64 * 1024))
    frame = await client.response("at-limit")
    # Not too big: it is read, and refused only because it is not a connect.
    assert "first request must be connect" in invalid(frame, "at-limit")


@pytest.fixture
async def small_payload_gw(tmp_path: Path) -> AsyncIterator[RunningGateway]:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN, max_payload=64 * 1024)
    async with running_gateway(tmp_path, gateway_settings=settings) as running:
        yield running


async def test_a_frame_over_max_payload_is_refused_and_the_connection_survives(
    small_payload_gw: RunningGateway,
) -> None:
    client = await WireClient.open(small_payload_gw.url)
    try:
        hello = await client.connect(token=TOKEN)
        assert hello["payload"]["policy"]["maxPayload"] == 64 * 1024
        await client.send(padded_health("too-big", 64 * 1024 + 1))
        assert "exceeds the limit of 65536 bytes" in invalid(await client.response(None), None)
        await client.send(padded_health("fits", 64 * 1024))
        fits = await client.response("fits")
        assert invalid(fits, "fits") == "invalid health params: unknown key 'p'"
        await still_works(client)
    finally:
        await client.close()


async def test_a_real_frame_over_25_mib_is_refused_and_the_connection_survives(
    client: WireClient,
) -> None:
    started = time.monotonic()
    await client.send(padded_health("huge", MAX_PAYLOAD + 1))
    frame = await client.response(None, timeout=10)
    assert f"exceeds the limit of {MAX_PAYLOAD} bytes" in invalid(frame, None)
    await still_works(client)
    assert time.monotonic() - started < 5


async def test_a_frame_over_the_transport_limit_closes_1009(client: WireClient) -> None:
    # The server may close before the client has finished sending the frame.
    with contextlib.suppress(websockets.ConnectionClosed, ConnectionResetError):
        await client.send("x" * (33 * 1024 * 1024))
    await asyncio.wait_for(client.closed, 10)
    assert client.ws.close_code == 1009


# --- requests in flight --------------------------------------------------------------------


async def test_too_many_requests_in_flight_get_unavailable_retryable(tmp_path: Path) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN, max_inflight_requests=3)
    async with running_gateway(tmp_path, gateway_settings=settings) as gw:
        release = asyncio.Event()

        async def block(call: Call) -> JSON:
            await release.wait()
            return {"released": True}

        gw.gateway.methods.add("test.block", block, scope=None, schema={})
        client = await WireClient.open(gw.url)
        try:
            await client.connect(token=TOKEN)
            for n in range(3):
                await client.send({"type": "req", "id": f"b{n}", "method": "test.block"})
            await client.send({"type": "req", "id": "over", "method": "health"})
            busy = await client.response("over")
            assert busy["ok"] is False
            assert busy["error"]["code"] == "UNAVAILABLE"
            assert busy["error"]["retryable"] is True
            assert "too many requests in flight (max 3)" in busy["error"]["message"]
            release.set()
            for n in range(3):
                assert (await client.response(f"b{n}"))["payload"] == {"released": True}
            await still_works(client)
        finally:
            await client.close()


async def test_a_method_that_crashes_gets_a_typed_error(
    gw: RunningGateway, client: WireClient
) -> None:
    async def crash(call: Call) -> JSON:
        raise RuntimeError("boom with internals")

    gw.gateway.methods.add("test.crash", crash, scope=None, schema={})
    frame = await client.call("test.crash", {})
    assert frame["ok"] is False
    assert frame["error"] == {
        "code": "UNAVAILABLE",
        "message": "internal error",
        "details": {"errorType": "Internal", "errorClass": "GatewayError"},
    }
    await still_works(client)


async def test_a_store_error_is_unavailable(gw: RunningGateway, client: WireClient) -> None:
    from clawline.errors import StoreError

    async def fail(call: Call) -> JSON:
        raise StoreError("database is locked")

    gw.gateway.methods.add("test.store", fail, scope=None, schema={})
    frame = await client.call("test.store", {})
    assert frame["error"] == {
        "code": "UNAVAILABLE",
        "message": "database is locked",
        "details": {"errorType": "Internal", "errorClass": "StoreError"},
    }
    await still_works(client)


async def test_requests_are_answered_concurrently(gw: RunningGateway, client: WireClient) -> None:
    release = asyncio.Event()

    async def block(call: Call) -> JSON:
        await release.wait()
        return {}

    gw.gateway.methods.add("test.block", block, scope=None, schema={})
    await client.send({"type": "req", "id": "slow", "method": "test.block"})
    await still_works(client)  # answered while the first is still pending
    release.set()
    assert (await client.response("slow"))["ok"] is True


# --- latency -------------------------------------------------------------------------------


def test_the_listening_socket_is_tcp_so_asyncio_disables_nagle() -> None:
    import socket

    from clawline.gateway.server import bind_socket

    sock = bind_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
        assert sock.getsockname()[0] == "127.0.0.1"
    finally:
        sock.close()


async def test_back_to_back_responses_are_not_delayed_by_nagle(client: WireClient) -> None:
    """An error frame followed by a response used to wait for a delayed ACK (~40 ms): the
    gateway's sockets lacked TCP_NODELAY."""
    timings = []
    for n in range(15):
        started = time.perf_counter()
        await client.send("{bad")
        await client.send({"type": "req", "id": f"quick{n}", "method": "health"})
        await client.response(None)
        await client.response(f"quick{n}")
        timings.append(time.perf_counter() - started)
    timings.sort()
    assert timings[len(timings) // 2] < 0.02, timings


def _raising(error: BaseException) -> Callable[[Call], Awaitable[JSON]]:
    async def handler(call: Call) -> JSON:
        raise error

    return handler


async def test_every_error_frame_carries_its_categorys_code_and_name(
    gw: RunningGateway, client: WireClient
) -> None:
    """Whatever refuses — a clawline error of each category, a gateway error, a plugin's
    method error, a crash, the gateway's own checks — the frame's code is the category's
    (errors.CATEGORY_CODES) and details.errorType names the category."""
    from clawline import errors
    from clawline.gateway.frames import ErrorCode, GatewayError
    from clawline.plugins.methods import MethodError
    from clawline.records.task import TaskNotFound
    from clawline.store.instance_lock import StoreInUse

    raised: dict[str, tuple[BaseException, str, str]] = {
        "t.input": (errors.InvalidField("bad"), "InvalidInput", "InvalidField"),
        "t.missing": (TaskNotFound("task not found: x"), "NotFound", "TaskNotFound"),
        "t.label": (errors.LabelInUse("label already in use: x"), "Conflict", "LabelInUse"),
        "t.busy": (StoreInUse("in use"), "Unavailable", "StoreInUse"),
        "t.broken": (errors.MigrationError("too new"), "Internal", "MigrationError"),
        "t.gateway": (
            GatewayError("nope", ErrorCode.UNAVAILABLE),
            "Unavailable",
            "GatewayError",
        ),
        "t.plugin": (MethodError("taken", "CONFLICT"), "Conflict", "MethodError"),
        "t.crash": (KeyError("boom"), "Internal", "GatewayError"),
    }
    for name, (error, _, _) in raised.items():
        gw.gateway.methods.add(name, _raising(error), scope=None, schema={})
    by_name = {category.__name__: category for category in errors.CATEGORIES}
    for name, (_, category, cls) in raised.items():
        frame = await client.call(name, {})
        details = frame["error"]["details"]
        assert (details["errorType"], details["errorClass"]) == (category, cls), name
        assert frame["error"]["code"] == errors.CATEGORY_CODES[by_name[category]], name
    for method, params in (("no.such.method", {}), ("health", {"bogus": 1})):
        frame = await client.call(method, params)
        assert frame["error"]["code"] == "INVALID_REQUEST"
        assert frame["error"]["details"]["errorType"] == "InvalidInput"
