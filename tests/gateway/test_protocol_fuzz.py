"""Fuzzing the frame reader: random frames over ONE authenticated connection.

Hypothesis drives the examples from a worker thread; each example is sent by the test's event
loop (where the gateway runs) and followed by a ``health`` sentinel, so every response the
frame caused has arrived when the sentinel's does. Properties: the server never crashes,
every frame gets exactly one response (carrying its id when the id is readable, else null),
every bad frame gets a typed ``INVALID_REQUEST`` error, and ``health`` works afterwards.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from typing import Any

import orjson
import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clawline.gateway.frames import MAX_ID_LENGTH, MAX_METHOD_LENGTH
from clawline.testing.live_gateway import RunningGateway
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import connect_params

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)
IDS = (
    st.text(max_size=10)
    | st.just("i" * MAX_ID_LENGTH)
    | st.just("i" * (MAX_ID_LENGTH + 1))
    | SCALARS
)
METHODS = (
    st.sampled_from(["health", "events.replay", "connect", "nope", "sessions.list", ""])
    | st.just("m" * (MAX_METHOD_LENGTH + 1))
    | st.text(max_size=12)
    | SCALARS
)
PARAMS: st.SearchStrategy[Any] = (
    st.just({})
    | st.fixed_dictionaries({"afterSeq": st.integers(min_value=-2, max_value=3)})
    | st.fixed_dictionaries(
        {"afterSeq": st.integers(min_value=0, max_value=2)}, optional={"bootId": st.text()}
    )
    | JSON_VALUES
)


@st.composite
def req_like(draw: st.DrawFn) -> str:
    frame: dict[str, Any] = {}
    for field, values in (
        ("type", st.sampled_from(["req", "req", "req", "res", "event"]) | SCALARS),
        ("id", IDS),
        ("method", METHODS),
        ("params", PARAMS),
    ):
        if draw(st.integers(0, 9)) > 0:  # each field present nine times in ten
            frame[field] = draw(values)
    if draw(st.integers(0, 9)) == 0:
        frame[draw(st.text(min_size=1, max_size=8))] = draw(JSON_VALUES)
    return json.dumps(frame)


FRAMES = (
    req_like()
    | JSON_VALUES.map(json.dumps)
    | st.text(max_size=40)
    | st.binary(max_size=40)
    | req_like().map(lambda text: text[: len(text) // 2])  # truncated JSON
)


def expectation(data: str | bytes) -> tuple[str | None, bool | None]:
    """(the id the response must carry, whether it must succeed; None: either)."""
    if isinstance(data, bytes):
        return None, False
    try:
        frame = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None, False
    if not isinstance(frame, dict):
        return None, False
    raw_id = frame.get("id")
    request_id = raw_id if isinstance(raw_id, str) and 0 < len(raw_id) <= MAX_ID_LENGTH else None
    if frame.get("type") != "req" or request_id is None:
        return request_id, False
    method = frame.get("method")
    if not isinstance(method, str) or not 0 < len(method) <= MAX_METHOD_LENGTH:
        return request_id, False
    if set(frame) - {"type", "id", "method", "params"}:
        return request_id, False
    params = frame.get("params")
    if method == "health":
        return request_id, params is None or params == {}
    if method == "events.replay" and isinstance(params, dict) and "afterSeq" in params:
        return request_id, None  # valid or not depending on the stream's position
    return request_id, False


async def test_random_frames_never_break_the_connection(
    gw: RunningGateway, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    loop = asyncio.get_running_loop()
    sentinels = itertools.count()
    examples = 0
    async with websockets.connect(gw.url + "/ws") as ws:
        await ws.recv()  # connect.challenge
        connect = {"type": "req", "id": "c", "method": "connect"}
        await ws.send(json.dumps({**connect, "params": connect_params(token=TOKEN)}))
        assert json.loads(await ws.recv())["ok"] is True

        async def round_trip(data: str | bytes) -> list[dict[str, Any]]:
            sentinel = f"sentinel-{next(sentinels)}"
            await ws.send(data)
            await ws.send(json.dumps({"type": "req", "id": sentinel, "method": "health"}))
            responses: list[dict[str, Any]] = []
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 5))
                if frame.get("type") != "res":
                    continue  # events (ticks, replayed events) are not responses
                if frame.get("id") == sentinel:
                    assert frame["ok"] is True, frame
                    return responses
                responses.append(frame)

        @settings(
            max_examples=400,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
        @given(FRAMES)
        def check_frame(data: str | bytes) -> None:
            nonlocal examples
            examples += 1
            responses = asyncio.run_coroutine_threadsafe(round_trip(data), loop).result(10)
            request_id, should_succeed = expectation(data)
            assert len(responses) == 1, (data, responses)
            (frame,) = responses
            assert frame["id"] == request_id, (data, frame)
            if frame["ok"] is False:
                assert frame["error"]["code"] == "INVALID_REQUEST", (data, frame)
                assert isinstance(frame["error"]["message"], str)
                assert should_succeed is not True, (data, frame)
            else:
                assert should_succeed is not False, (data, frame)

        await asyncio.to_thread(check_frame)
        await ws.send(json.dumps({"type": "req", "id": "after", "method": "health"}))
        after = json.loads(await ws.recv())
        assert after["id"] == "after"
        assert after["ok"] is True
    assert examples >= 100
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert not errors, [record.getMessage() for record in errors]


CONNECT_LIKE = FRAMES | st.builds(
    lambda params: json.dumps({"type": "req", "id": "c", "method": "connect", "params": params}),
    st.fixed_dictionaries(
        {},
        optional={
            "minProtocol": st.integers(-1, 6) | SCALARS,
            "maxProtocol": st.integers(-1, 6) | SCALARS,
            "client": JSON_VALUES,
            "role": st.sampled_from(["operator", "node"]) | SCALARS,
            "scopes": st.lists(st.text(max_size=16), max_size=3) | SCALARS,
            "auth": st.fixed_dictionaries({"token": st.just(TOKEN) | SCALARS}) | SCALARS,
            "device": JSON_VALUES,
        },
    ),
)


async def test_random_first_frames_get_one_typed_answer(
    gw: RunningGateway, caplog: pytest.LogCaptureFixture
) -> None:
    """Before ``connect`` succeeds, a bad first frame gets exactly one typed error and the
    connection is closed with 1008; the gateway keeps accepting connections."""
    caplog.set_level(logging.WARNING)
    loop = asyncio.get_running_loop()

    async def first_frame(data: str | bytes) -> tuple[list[dict[str, Any]], int | None]:
        async with websockets.connect(gw.url + "/ws") as ws:
            await ws.recv()  # connect.challenge
            await ws.send(data)
            frames: list[dict[str, Any]] = []
            try:
                while True:
                    frames.append(json.loads(await asyncio.wait_for(ws.recv(), 5)))
                    if frames[-1].get("ok") is True:
                        return frames, None
            except websockets.ConnectionClosed:
                return frames, ws.close_code

    @settings(
        max_examples=120,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(CONNECT_LIKE)
    def check_first_frame(data: str | bytes) -> None:
        frames, close_code = asyncio.run_coroutine_threadsafe(first_frame(data), loop).result(10)
        assert len(frames) == 1, (data, frames)
        (frame,) = frames
        assert frame["type"] == "res"
        if frame["ok"] is False:
            assert frame["error"]["code"] == "INVALID_REQUEST", (data, frame)
            assert close_code == 1008, (data, frame, close_code)
        else:
            assert frame["payload"]["type"] == "hello-ok"

    await asyncio.to_thread(check_first_frame)
    await asyncio.sleep(0.1)
    assert not gw.gateway.connections
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert not errors, [record.getMessage() for record in errors]
