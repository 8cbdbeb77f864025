"""Running ``clawline acp`` as a real subprocess and talking to it with the SDK client.

:func:`start_bridge` spawns ``python -m clawline acp …`` through ``acp.spawn_agent_process``
with a :class:`Recorder` observing every JSON-RPC message in both directions (validated against
the ACP schema by :func:`tests.acp.schema_check.traffic_problems`). The bridge's stderr goes to
a file (the SDK would otherwise pipe it and never read it, and block once the pipe is full), and
every stdout line the SDK could not parse as JSON is counted from the SDK's log record.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import acp
from acp.connection import Connection, StreamDirection, StreamEvent
from acp.schema import RequestPermissionResponse

from clawline.client import GatewayClient
from clawline.testing.live_gateway import RunningGateway
from tests.acp.schema_check import Sender, traffic_problems

__all__ = [
    "TOKEN",
    "BridgeProcess",
    "Recorder",
    "UpdateCollector",
    "bridge_command",
    "gateway_client",
    "seed",
    "start_bridge",
    "text_of",
]

TOKEN = "acp-test-token-0123456789"
STDOUT_LIMIT = 64 * 1024 * 1024
_PARSE_FAILURE = "Error parsing JSON-RPC message"


class Recorder:
    """Every message of one connection, as ``(sender, message)``."""

    def __init__(self) -> None:
        self.traffic: list[tuple[Sender, dict[str, Any]]] = []
        self.unparsed_lines = 0

    def observe(self, event: StreamEvent) -> None:
        sender: Sender = "client" if event.direction is StreamDirection.OUTGOING else "agent"
        self.traffic.append((sender, event.message))

    def problems(self) -> list[str]:
        found = traffic_problems(self.traffic)
        if self.unparsed_lines:
            found.append(f"{self.unparsed_lines} stdout line(s) were not JSON")
        return found

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The ``update`` objects of the agent's ``session/update`` notifications, in order."""
        return [
            message["params"]["update"]
            for sender, message in self.traffic
            if sender == "agent"
            and message.get("method") == "session/update"
            and (session_id is None or message["params"]["sessionId"] == session_id)
        ]

    def index_of_response(self, request_method: str) -> int:
        """Position (in the traffic) of the agent's answer to the last ``request_method``."""
        ids = [
            message["id"]
            for sender, message in self.traffic
            if sender == "client" and message.get("method") == request_method and "id" in message
        ]
        assert ids, f"no {request_method} request was sent"
        for index, (sender, message) in enumerate(self.traffic):
            if sender == "agent" and "method" not in message and message.get("id") == ids[-1]:
                return index
        raise AssertionError(f"no answer to {request_method}")


class _ParseFailures(logging.Handler):
    def __init__(self, recorder: Recorder) -> None:
        super().__init__(logging.ERROR)
        self.recorder = recorder

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() == _PARSE_FAILURE:
            self.recorder.unparsed_lines += 1


class UpdateCollector:
    """The ACP client object: keeps the (pydantic) updates; refuses permission requests."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        raise acp.RequestError.method_not_found("session/request_permission")


@dataclass
class BridgeProcess:
    conn: acp.ClientSideConnection
    process: Any
    recorder: Recorder
    stderr: Path
    collector: UpdateCollector = field(default_factory=UpdateCollector)

    @property
    def raw(self) -> Connection:
        """The SDK's JSON-RPC connection under ``conn``: requests with raw JSON results."""
        inner = getattr(self.conn, "_conn", None)
        assert isinstance(inner, Connection)
        return inner

    async def call(self, method: str, params: Mapping[str, Any]) -> Any:
        """One request; the decoded ``result`` (raises ``acp.RequestError`` for an error)."""
        return await self.raw.send_request(method, dict(params))

    async def notify(self, method: str, params: Mapping[str, Any]) -> None:
        await self.raw.send_notification(method, dict(params))

    async def initialize(self) -> dict[str, Any]:
        result: dict[str, Any] = await self.call(
            "initialize", {"protocolVersion": 1, "clientCapabilities": {}}
        )
        return result

    async def new_session(self, cwd: str, **meta: Any) -> str:
        params: dict[str, Any] = {"cwd": cwd, "mcpServers": []}
        if meta:
            params["_meta"] = meta
        result = await self.call("session/new", params)
        session_id: str = result["sessionId"]
        return session_id

    def stderr_text(self) -> str:
        return self.stderr.read_text(encoding="utf-8", errors="replace")


def bridge_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "clawline", "acp", *args]


@asynccontextmanager
async def start_bridge(
    *args: str, env: Mapping[str, str], cwd: Path, stderr: Path
) -> AsyncIterator[BridgeProcess]:
    """``clawline acp <args>`` as a subprocess; stopped (stdin closed, then terminated, then
    killed) on exit, which also checks that it is gone."""
    recorder = Recorder()
    handler = _ParseFailures(recorder)
    logging.getLogger().addHandler(handler)
    command = bridge_command(*args)
    collector = UpdateCollector()
    try:
        with stderr.open("ab") as err:
            async with acp.spawn_agent_process(
                cast(acp.Client, collector),
                command[0],
                *command[1:],
                env=dict(env),
                cwd=cwd,
                transport_kwargs={"stderr": err.fileno(), "limit": STDOUT_LIMIT},
                observers=[recorder.observe],
            ) as (conn, process):
                yield BridgeProcess(conn, process, recorder, stderr, collector)
            assert process.returncode is not None, "the bridge process is still running"
    finally:
        logging.getLogger().removeHandler(handler)


def text_of(updates: list[dict[str, Any]], kind: str) -> str:
    """The text of every ``kind`` chunk (``agent_message_chunk``, …) joined."""
    return "".join(
        update["content"]["text"]
        for update in updates
        if update["sessionUpdate"] == kind and update["content"]["type"] == "text"
    )


async def seed(gateway: RunningGateway, specs: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
    """``catalog.patch`` each ``(key, changes)`` in order, on the gateway's store thread."""
    catalog = gateway.runtime.catalog

    def write() -> None:
        for key, changes in specs:
            catalog.patch(key, dict(changes))

    await gateway.runtime.call(write)


@asynccontextmanager
async def gateway_client(gateway: RunningGateway) -> AsyncIterator[GatewayClient]:
    client = await GatewayClient.connect(gateway.url, token=TOKEN)
    try:
        yield client
    finally:
        await client.close()
