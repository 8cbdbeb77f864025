"""Spawning an ACP agent process and connecting to its stdio: the one way the client stack
starts an agent (the links of :mod:`clawline.acp_client.link` and the acp spawn runtime's child
agents).

:func:`spawn_agent` runs the agent's argv as a subprocess in a process group of its own
(``start_new_session``), with the SDK's minimal default environment plus the command's ``env``,
and connects to its stdio: with a ``client`` object (the SDK calls its ``session_update``,
``request_permission``…) through the SDK's client side (``acp.connect_to_agent``), without one
through a plain JSON-RPC connection that refuses every request of the agent and ignores its
notifications. Either way :attr:`SpawnedAgent.requester` sends raw JSON-RPC requests.

Why not ``acp.spawn_agent_process`` / ``acp.spawn_stdio_connection``: their shutdown (stdin EOF,
2 s, terminate, 2 s, kill) signals only the direct child, so an agent command that is a wrapper
(``npx``, a shell script) would leave its real agent behind. :meth:`SpawnedAgent.stop` runs,
each step only while the agent is still there:

1. stdin closed (EOF), then up to one grace period for the agent to exit;
2. ``SIGTERM`` to the process group, then up to one grace period;
3. ``SIGKILL`` to the process group.

As soon as the agent has exited (for whatever reason), whatever is left in its process group is
killed, so nothing leaks. stderr goes to a file (appended), to a given descriptor or to ours —
never to a pipe nobody reads, as the SDK would make (a full pipe blocks the agent); stdout lines
may be up to 50 MiB.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

from acp import Client, RequestError, connect_to_agent
from acp.client.connection import ClientSideConnection
from acp.connection import Connection, StreamObserver
from acp.transports import default_environment

from clawline.acp_client.agent_calls import AcpClientError, JsonRpcRequester

log = logging.getLogger("clawline.acp_client")

STDOUT_LINE_LIMIT = 50 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class AgentCommand:
    """How to start an agent: its argv, what it adds to the default environment, its working
    directory, and where its stderr goes (a file appended to, a descriptor such as
    ``subprocess.DEVNULL``, or ``None`` for ours)."""

    argv: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | Path | None = None
    stderr: Path | int | None = None
    name: str = ""
    """For the logs (the configured agent id); the executable when empty."""

    @property
    def label(self) -> str:
        return self.name or (str(self.argv[0]) if self.argv else "?")


async def _refuse_client_calls(method: str, params: Any | None, is_notification: bool) -> None:
    """A connection without a client object advertises no client capabilities: the agent's
    requests are refused, its notifications (``session/update``) ignored."""
    if not is_notification:
        raise RequestError.method_not_found(method)


def raw_requester(connection: ClientSideConnection | JsonRpcRequester) -> JsonRpcRequester:
    """The JSON-RPC connection under the SDK's client side, for requests whose results are
    wanted as raw JSON (any other requester is returned as it is)."""
    if not isinstance(connection, ClientSideConnection):
        return connection
    # The SDK (pinned <0.13) keeps its JSON-RPC Connection in ``_conn`` and offers no public way
    # to send a non-extension request without pydantic parsing of the result.
    inner = getattr(connection, "_conn", None)
    if not isinstance(inner, Connection):
        raise TypeError("this acp.ClientSideConnection has no raw JSON-RPC connection")
    return inner


class SpawnedAgent:
    """One started agent process and its connection (module docstring)."""

    def __init__(
        self,
        command: AgentCommand,
        process: asyncio.subprocess.Process,
        connection: ClientSideConnection | Connection,
        stderr: IO[bytes] | None,
        logger: logging.Logger = log,
    ) -> None:
        self.command = command
        self.log = logger
        self.process = process
        self.client_side = connection if isinstance(connection, ClientSideConnection) else None
        """The SDK's typed client side (``prompt``, ``new_session``…) when a client was given."""
        self.requester: JsonRpcRequester = raw_requester(connection)
        self._connection = connection
        self._stderr = stderr
        self._reaper = asyncio.ensure_future(self._reap())
        self._stopping: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def stop(self, grace_s: float) -> asyncio.Task[None]:
        """Stop the agent (module docstring) and close the connection; idempotent, one stop
        however often called (the first ``grace_s`` holds)."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop(grace_s))
        return self._stopping

    async def _stop(self, grace_s: float) -> None:
        process = self.process
        try:
            if process.returncode is None:
                await self._end(process, grace_s)
            await self._reaper
        finally:
            with contextlib.suppress(Exception):
                await self._connection.close()
            if self._stderr is not None:
                self._stderr.close()

    async def _reap(self) -> None:
        """Once the agent has exited, kill what is left of its process group — at once, while
        the group id cannot have been reused."""
        await self.process.wait()
        _kill_group(self.process.pid, signal.SIGKILL)

    async def _end(self, process: asyncio.subprocess.Process, grace_s: float) -> None:
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                process.stdin.close()
        if await _exited(process, grace_s):
            return
        self.log.info("ACP agent %s (pid %d) did not exit on EOF", self.command.label, process.pid)
        _kill_group(process.pid, signal.SIGTERM)
        if await _exited(process, grace_s):
            return
        self.log.warning("ACP agent %s (pid %d) ignored SIGTERM", self.command.label, process.pid)
        _kill_group(process.pid, signal.SIGKILL)
        await process.wait()


async def _exited(process: asyncio.subprocess.Process, grace_s: float) -> bool:
    try:
        await asyncio.wait_for(process.wait(), grace_s)
    except TimeoutError:
        return False
    return True


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def spawn_agent(
    command: AgentCommand,
    *,
    client: object | None = None,
    observers: Sequence[StreamObserver] = (),
    logger: logging.Logger = log,
) -> SpawnedAgent:
    """Start ``command`` and connect to it (with ``client``: the SDK's client side, which looks
    the client's methods up by name and answers ``-32601`` for the missing ones). ``observers``
    see every JSON-RPC message; ``logger`` (the caller's) gets the steps of the stop. A command
    that cannot be started is an :class:`~clawline.acp_client.agent_calls.AcpClientError`
    (``ACP agent could not be started: …``)."""
    env = {**default_environment(), **command.env}
    stderr: IO[bytes] | None = None
    target: IO[bytes] | int | None
    if isinstance(command.stderr, Path):
        command.stderr.parent.mkdir(parents=True, exist_ok=True)
        stderr = target = command.stderr.open("ab")
    else:
        target = command.stderr
    try:
        process = await asyncio.create_subprocess_exec(
            *command.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=target,
            env=env,
            cwd=None if command.cwd is None else str(command.cwd),
            start_new_session=True,
            limit=STDOUT_LINE_LIMIT,
        )
    except BaseException as error:
        if stderr is not None:
            stderr.close()
        if isinstance(error, OSError | ValueError):
            raise AcpClientError(f"ACP agent could not be started: {error}") from error
        raise
    assert process.stdin is not None
    assert process.stdout is not None
    connection: ClientSideConnection | Connection
    if client is None:
        connection = Connection(
            _refuse_client_calls, process.stdin, process.stdout, observers=list(observers)
        )
    else:
        connection = connect_to_agent(
            cast(Client, client), process.stdin, process.stdout, observers=list(observers)
        )
    return SpawnedAgent(command, process, connection, stderr, logger)
