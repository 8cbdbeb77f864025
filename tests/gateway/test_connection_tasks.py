"""A connection owns its tasks: closing it cancels the requests still in flight and waits for
them (at most ``close_timeout_s``), so :meth:`Connection.serve` returns with none left behind —
whether the client went away, the gateway closed the connection, or the gateway stopped."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from clawline.gateway import connection as connection_module
from clawline.gateway.connection import Connection
from clawline.gateway.options import GatewaySettings
from clawline.gateway.registry import Call
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.types import JSON
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

Wire = Callable[..., Awaitable[WireClient]]


@dataclass
class SlowMethod:
    """``test.slow``: runs until cancelled, then cleans up until :attr:`release` is set."""

    started: asyncio.Event = field(default_factory=asyncio.Event)
    cleaning: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: list[asyncio.Task[object]] = field(default_factory=list)

    async def __call__(self, call: Call) -> JSON:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.append(task)
        self.started.set()
        try:
            await asyncio.Event().wait()  # until cancelled
        finally:
            self.cleaning.set()
            await self.release.wait()
        return {}

    @property
    def task(self) -> asyncio.Task[object]:
        [task] = self.tasks
        return task


async def in_flight(gw: RunningGateway, client: WireClient, slow: SlowMethod) -> Connection:
    """Start ``test.slow`` on ``client``; the gateway's side of that connection."""
    gw.gateway.methods.add("test.slow", slow, scope=None, schema={})
    await client.send({"type": "req", "id": "slow", "method": "test.slow"})
    await asyncio.wait_for(slow.started.wait(), 5)
    [connection] = gw.gateway.connections.values()
    return connection


@pytest.mark.parametrize("closed_by", ["client", "gateway"])
async def test_serve_returns_once_the_requests_in_flight_have_finished(
    gw: RunningGateway, client: WireClient, closed_by: str
) -> None:
    slow = SlowMethod()
    connection = await in_flight(gw, client, slow)
    if closed_by == "client":
        await client.close()
    else:
        connection.disconnect("closed by the test")
        await asyncio.wait_for(client.closed, 5)
        assert client.ws.close_code == 1008
    await asyncio.wait_for(slow.cleaning.wait(), 5)  # the request was cancelled
    assert connection.id not in gw.gateway.connections
    # The request is still cleaning up, so the connection has not finished.
    assert not slow.task.done()
    assert not connection.finished.is_set()

    slow.release.set()
    await asyncio.wait_for(connection.finished.wait(), 5)
    assert slow.task.done()
    assert slow.task.cancelled()


async def test_a_request_still_cleaning_up_after_the_bound_is_given_up_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="clawline.gateway")
    settings = GatewaySettings(port=0, auth="token", token=TOKEN, close_timeout_s=0.2)
    slow = SlowMethod()
    async with running_gateway(tmp_path / "state", gateway_settings=settings) as gw:
        client = await WireClient.open(gw.url)
        try:
            assert (await client.connect(token=TOKEN))["ok"] is True
            connection = await in_flight(gw, client, slow)
        finally:
            await client.close()
        try:
            await asyncio.wait_for(connection.finished.wait(), 5)
            assert not slow.task.done(), "serve() stopped waiting after close_timeout_s"
            warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
            assert f"{connection.id}: 1 task(s) still running 0.2 s after" in "\n".join(warnings)
        finally:
            slow.release.set()
            await asyncio.wait_for(asyncio.gather(*slow.tasks, return_exceptions=True), 5)
        assert slow.task.done()


def connection_tasks() -> list[asyncio.Task[object]]:
    """The tasks of this loop that run the gateway connection's code (its requests, its
    writer)."""
    here = connection_module.__file__
    return [
        task
        for task in asyncio.all_tasks()
        if getattr(getattr(task.get_coro(), "cr_code", None), "co_filename", None) == here
    ]


async def test_a_stopped_gateway_leaves_no_connection_task_behind(tmp_path: Path) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    slow = SlowMethod()
    slow.release.set()  # cleaning up takes no time: the request only waits to be cancelled
    clients: list[WireClient] = []
    try:
        async with running_gateway(tmp_path / "state", gateway_settings=settings) as gw:
            for _ in range(2):
                clients.append(await WireClient.open(gw.url))
                assert (await clients[-1].connect(token=TOKEN))["ok"] is True
            gw.gateway.methods.add("test.slow", slow, scope=None, schema={})
            await clients[0].send({"type": "req", "id": "slow", "method": "test.slow"})
            await asyncio.wait_for(slow.started.wait(), 5)
            connections = list(gw.gateway.connections.values())
            assert len(connections) == 2
            assert len(connection_tasks()) == 3  # two writers and the slow request
        # The gateway has stopped with both clients still connected.
        assert all(connection.finished.is_set() for connection in connections)
        assert slow.task.cancelled()
        assert connection_tasks() == []
    finally:
        for client in clients:
            await client.close()
