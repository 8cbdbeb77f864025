"""The agent process serving one ACP child, with its one ACP session (the acp spawn runtime's
client side).

:meth:`AgentProcess.start` starts the agent through the client stack
(:func:`clawline.acp_client.agent_process.spawn_agent`: its own process group, stderr to the
child's log file, the SDK's client side ``acp.connect_to_agent`` with the
:class:`~clawline.collab.acp.callbacks.RuntimeClient`), sends the client stack's ``initialize``
(:func:`clawline.acp_client.agent_calls.initialize`, with ``clientInfo``), then ``session/new
{cwd, mcpServers: []}`` — or ``session/load`` of an existing ACP session when the agent
advertises ``loadSession`` (``ACP agent does not support session/load`` otherwise).
:meth:`prompt` sends one ``session/prompt`` and returns its ``stopReason``; the agent's
``session/update`` notifications go to the ``RuntimeClient``. Every request is raced against
the process exiting (:func:`clawline.acp_client.agent_calls.call`); failures are
:class:`~clawline.errors.AcpAgentError` with the agent's text.

:meth:`close` runs, each step only while the agent is still there: ``session/close`` when the
agent advertises ``sessionCapabilities.close`` (bounded by the grace period), then the client
stack's stop (stdin EOF, ``SIGTERM`` and ``SIGKILL`` to the process group, each after one grace
period; see :mod:`clawline.acp_client.agent_process`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Iterator, Sequence
from typing import TypeVar

from acp import text_block
from acp.client.connection import ClientSideConnection
from acp.connection import StreamObserver
from acp.schema import AgentCapabilities, InitializeResponse

from clawline import __version__
from clawline.acp_client.agent_calls import NO_SESSION_LOAD, AcpClientError, call, initialize
from clawline.acp_client.agent_process import AgentCommand, SpawnedAgent, spawn_agent
from clawline.collab.acp.callbacks import RuntimeClient
from clawline.errors import AcpAgentError

log = logging.getLogger("clawline.collab.acp")

CLIENT_INFO = {"name": "clawline", "version": __version__}
"""The ``clientInfo`` a child's agent is initialised with."""

T = TypeVar("T")


@contextlib.contextmanager
def _agent_errors() -> Iterator[None]:
    """The client stack's errors as :class:`AcpAgentError`, and an answer the SDK's models
    refuse as ``invalid ACP answer: …``."""
    try:
        yield
    except AcpAgentError:
        raise
    except AcpClientError as error:
        raise AcpAgentError(str(error)) from error
    except Exception as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise AcpAgentError(f"invalid ACP answer: {type(error).__name__} {first}") from error


class AgentProcess:
    def __init__(
        self,
        command: AgentCommand,
        client: RuntimeClient,
        *,
        grace_s: float,
        observers: Sequence[StreamObserver] = (),
    ) -> None:
        self.command = command
        self.client = client
        self.grace_s = grace_s
        self.observers: list[StreamObserver] = list(observers)
        """Set before :meth:`start`: they see every JSON-RPC message of the connection."""
        self.agent: SpawnedAgent | None = None
        self.capabilities = AgentCapabilities()
        self.session_id: str | None = None
        self._closing: asyncio.Task[None] | None = None

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        return None if self.agent is None else self.agent.process

    @property
    def connection(self) -> ClientSideConnection | None:
        return None if self.agent is None else self.agent.client_side

    @property
    def pid(self) -> int | None:
        return None if self.agent is None else self.agent.pid

    @property
    def alive(self) -> bool:
        return self.agent is not None and self.agent.running and not self.closing

    @property
    def closing(self) -> bool:
        return self._closing is not None

    # --- start -----------------------------------------------------------------------------

    async def start(self, *, cwd: str, resume_session_id: str | None, timeout_s: float) -> None:
        """Start, initialise and open (or load) the session; on failure everything started is
        stopped again and :class:`AcpAgentError` says why."""
        try:
            await asyncio.wait_for(self._start(cwd, resume_session_id), timeout_s)
        except BaseException as error:
            await asyncio.shield(self.close())
            if isinstance(error, AcpAgentError):
                raise
            if isinstance(error, TimeoutError):
                raise AcpAgentError(
                    f"ACP agent did not answer within {timeout_s:g} s while starting"
                ) from None
            raise

    async def _start(self, cwd: str, resume_session_id: str | None) -> None:
        with _agent_errors():
            self.agent = agent = await spawn_agent(
                dataclasses.replace(self.command, cwd=cwd),
                client=self.client,
                observers=self.observers,
                logger=log,
            )
        connection = agent.client_side
        assert connection is not None
        with _agent_errors():
            answer = await initialize(agent.requester, agent.process, client_info=CLIENT_INFO)
            initialized = InitializeResponse.model_validate(answer)
        self.capabilities = initialized.agent_capabilities or AgentCapabilities()
        if resume_session_id is None:
            created = await self._call(connection.new_session(cwd=cwd, mcp_servers=[]))
            self.session_id = self.client.session_id = created.session_id
            return
        if not self.capabilities.load_session:
            raise AcpAgentError(NO_SESSION_LOAD)
        self.client.replaying = True  # the replayed history is not part of any turn
        try:
            await self._call(
                connection.load_session(cwd=cwd, session_id=resume_session_id, mcp_servers=[])
            )
        finally:
            self.client.replaying = False
        self.session_id = self.client.session_id = resume_session_id

    async def _call(self, request: Awaitable[T]) -> T:
        """One request raced against the process exiting; errors as :class:`AcpAgentError`."""
        assert self.agent is not None
        with _agent_errors():
            return await call(request, self.agent.process)

    # --- turns -----------------------------------------------------------------------------

    def prompt(self, text: str) -> asyncio.Task[str]:
        """Send ``session/prompt`` with one text block; the task's result is the
        ``stopReason`` (errors: :class:`AcpAgentError`)."""
        connection, session_id = self.connection, self.session_id
        if connection is None or session_id is None or not self.alive:
            raise AcpAgentError(f"ACP agent {self.command.label} is not running")

        async def send() -> str:
            answer = await self._call(
                connection.prompt(session_id=session_id, prompt=[text_block(text)])
            )
            return str(answer.stop_reason)

        return asyncio.ensure_future(send())

    async def cancel(self) -> None:
        """``session/cancel`` (a notification: nothing to wait for)."""
        if self.connection is not None and self.session_id is not None and self.alive:
            with contextlib.suppress(Exception):
                await self.connection.cancel(session_id=self.session_id)

    # --- stop ------------------------------------------------------------------------------

    def close(self) -> asyncio.Task[None]:
        """Stop the agent (module docstring); idempotent, one shutdown however often called."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close())
        return self._closing

    async def _close(self) -> None:
        agent = self.agent
        if agent is None:
            return
        if agent.running:
            await self._close_session()
        await agent.stop(self.grace_s)

    async def _close_session(self) -> None:
        supported = self.capabilities.session_capabilities
        if supported is None or supported.close is None:
            return
        if self.connection is None or self.session_id is None:
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self.connection.close_session(session_id=self.session_id), self.grace_s
            )
