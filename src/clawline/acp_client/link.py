"""The client side of one ACP agent for the family loader and ``clawline acp ls``: raw JSON-RPC
requests and the lazy, single-flight initialisation that every client operation shares
(docs/acp-client.md).

Why raw JSON: the SDK's :class:`acp.ClientSideConnection` parses each result into pydantic
models, which refuse or normalise exactly the malformed pages the family operation must report
as ``Invalid ACP session/list response``. An :class:`AgentLink` therefore sends requests through
the SDK's low-level JSON-RPC :class:`acp.connection.Connection` (``send_request``) and returns the
decoded JSON untouched; callers validate it themselves. ``initialize`` and every request go
through :mod:`clawline.acp_client.agent_calls` (one protocol version, one race against the
process exiting).

A link is built from an *opener* that yields an :class:`AgentChannel` (a JSON-RPC requester and,
when known, the agent's process). :func:`spawned_agent` opens a fresh process per attempt
(:func:`clawline.acp_client.agent_process.spawn_agent`); :meth:`AgentLink.over` wraps a
connection the caller already has (an ``acp.Connection`` or the SDK's ``ClientSideConnection``
from ``acp.spawn_agent_process`` / ``acp.connect_to_agent``).
"""

from __future__ import annotations

import asyncio
import contextlib
from asyncio.subprocess import Process
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from acp.client.connection import ClientSideConnection
from acp.connection import StreamObserver

from clawline.acp_client.agent_calls import (
    NO_SESSION_LOAD,
    AcpClientError,
    AgentGone,
    JsonRpcRequester,
    call,
    initialize,
)
from clawline.acp_client.agent_process import (
    AgentCommand,
    SpawnedAgent,
    raw_requester,
    spawn_agent,
)

INIT_ATTEMPTS = 2
STOP_GRACE_SECONDS = 2.0
"""Each step of stopping a spawned agent (EOF, SIGTERM) waits this long."""


@dataclass(frozen=True, slots=True)
class AgentFeatures:
    """The ``agentCapabilities`` an agent answered ``initialize`` with, as raw JSON."""

    capabilities: Mapping[str, Any]

    @property
    def lists_sessions(self) -> bool:
        """``sessionCapabilities.list`` is a plain object (``{}`` qualifies; ``true`` does not)."""
        session = self.capabilities.get("sessionCapabilities")
        return type(session) is dict and type(session.get("list")) is dict


class AcpAgentConnection(Protocol):
    """The connection the family operation and ``acp ls`` use; :class:`AgentLink` is one."""

    async def ready(self) -> AgentFeatures: ...

    async def request(self, method: str, params: Mapping[str, Any]) -> object: ...


@dataclass(frozen=True, slots=True)
class AgentChannel:
    requester: JsonRpcRequester
    process: Process | None = None
    close: Callable[[], Awaitable[object]] | None = None


ChannelOpener = Callable[[], Awaitable[AgentChannel]]


def js_truthy(value: object) -> bool:
    """JavaScript truthiness of a JSON value (``[]`` and ``{}`` are truthy)."""
    if value is None or value is False or value == "":
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value == value and value != 0  # NaN is falsy
    return True


class AgentLink:
    """One ACP agent seen from the client side. :meth:`ready` initialises lazily, once, with up to
    :data:`INIT_ATTEMPTS` attempts; concurrent callers share the attempt in flight. When the
    connection drops the link forgets its capabilities and the next :meth:`ready` reopens."""

    def __init__(
        self,
        opener: ChannelOpener,
        *,
        attempts: int = INIT_ATTEMPTS,
        require_load: bool = True,
        before_attempt: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        self._opener = opener
        self._attempts = attempts
        self._require_load = require_load
        self._before_attempt = before_attempt
        self._channel: AgentChannel | None = None
        self._features: AgentFeatures | None = None
        self._initialising: asyncio.Future[AgentFeatures] | None = None

    @classmethod
    def over(
        cls,
        connection: ClientSideConnection | JsonRpcRequester,
        process: Process | None = None,
        *,
        require_load: bool = True,
    ) -> AgentLink:
        """A link over a connection the caller owns (and closes); a retry re-sends
        ``initialize`` on the same connection."""
        channel = AgentChannel(raw_requester(connection), process)

        async def same_channel() -> AgentChannel:
            return channel

        return cls(same_channel, require_load=require_load)

    @property
    def lists_sessions(self) -> bool:
        """The capability flag: false until initialised and again after the connection drops."""
        return self._features is not None and self._features.lists_sessions

    @property
    def process(self) -> Process | None:
        """The agent process of the open connection, when known."""
        return None if self._channel is None else self._channel.process

    async def ready(self) -> AgentFeatures:
        channel, features = self._channel, self._features
        if channel is not None and features is not None:
            if channel.process is None or channel.process.returncode is None:
                return features
            await self._drop(channel)
        if self._initialising is None:
            task = asyncio.ensure_future(self._initialise())
            task.add_done_callback(self._initialised)
            self._initialising = task
        return await asyncio.shield(self._initialising)

    async def request(self, method: str, params: Mapping[str, Any]) -> object:
        """Send one request after :meth:`ready`; the decoded ``result``, unvalidated."""
        await self.ready()
        channel = self._channel
        assert channel is not None
        return await self._call(channel, method, dict(params))

    async def close(self) -> None:
        if self._channel is not None:
            await self._drop(self._channel)

    def _initialised(self, task: asyncio.Future[AgentFeatures]) -> None:
        self._initialising = None
        if not task.cancelled():
            task.exception()  # retrieved here so an abandoned failure is not reported again

    async def _initialise(self) -> AgentFeatures:
        failure: AcpClientError | None = None
        for _ in range(self._attempts):
            if self._before_attempt is not None:
                await self._before_attempt()
            try:
                channel = await self._opener()
            except AcpClientError as error:
                failure = error
                continue
            except Exception as error:
                failure = AcpClientError(f"ACP agent could not be started: {error}")
                continue
            try:
                result = await initialize(channel.requester, channel.process)
            except AcpClientError as error:
                failure = error
                await self._discard(channel)
                continue
            raw = result.get("agentCapabilities") if type(result) is dict else None
            features = AgentFeatures(raw if type(raw) is dict else {})
            if self._require_load and not js_truthy(features.capabilities.get("loadSession")):
                await self._discard(channel)
                raise AcpClientError(NO_SESSION_LOAD)
            self._channel, self._features = channel, features
            return features
        assert failure is not None
        raise failure

    async def _call(self, channel: AgentChannel, method: str, params: dict[str, Any]) -> object:
        """One request through :func:`~clawline.acp_client.agent_calls.call`; a channel that
        went away is forgotten (the next :meth:`ready` reopens)."""
        try:
            return await call(channel.requester.send_request(method, params), channel.process)
        except AgentGone:
            await self._drop(channel)
            raise

    async def _drop(self, channel: AgentChannel) -> None:
        if self._channel is channel:
            self._channel, self._features = None, None
        await self._discard(channel)

    async def _discard(self, channel: AgentChannel) -> None:
        if channel.close is not None:
            await channel.close()


@contextlib.asynccontextmanager
async def spawned_agent(
    command: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    observers: Sequence[StreamObserver] = (),
    stderr: int | None = None,
    require_load: bool = True,
    before_attempt: Callable[[], Awaitable[object]] | None = None,
) -> AsyncIterator[AgentLink]:
    """A link that starts ``command`` (a fresh process per initialisation attempt, see
    :func:`~clawline.acp_client.agent_process.spawn_agent`) and stops every process it started on
    exit. ``env`` is added to the SDK's minimal default environment. ``stderr`` defaults to
    inheriting ours, so a chatty agent cannot block on a full pipe. ``require_load=False``
    accepts an agent without ``loadSession`` (listing needs no loading). ``before_attempt`` runs
    before each initialisation attempt (ClawX approves pending local device pairings there;
    clawline itself needs nothing)."""
    started: list[SpawnedAgent] = []
    agent_command = AgentCommand(argv=(command, *args), env=dict(env or {}), cwd=cwd, stderr=stderr)

    async def open_channel() -> AgentChannel:
        agent = await spawn_agent(agent_command, observers=observers)
        started.append(agent)

        async def stop() -> None:
            await agent.stop(STOP_GRACE_SECONDS)

        return AgentChannel(agent.requester, agent.process, stop)

    try:
        yield AgentLink(open_channel, require_load=require_load, before_attempt=before_attempt)
    finally:
        for agent in reversed(started):
            await agent.stop(STOP_GRACE_SECONDS)
