"""One external ACP agent process and its one ACP session (the acp spawn runtime's client side).

:meth:`AgentProcess.start` runs the agent's argv as a subprocess in a process group of its own,
connects the SDK's client side to its stdio (``acp.connect_to_agent``), sends ``initialize``,
then ``session/new {cwd, mcpServers: []}`` — or ``session/load`` of an existing ACP session when
the agent advertises ``loadSession`` (``ACP agent does not support session/load`` otherwise).
:meth:`prompt` sends one ``session/prompt`` and returns its ``stopReason``; the agent's
``session/update`` notifications go to the :class:`~clawline.collab.acp.callbacks.RuntimeClient`.

Why not ``acp.spawn_agent_process``: its shutdown (stdin EOF, 2 s, terminate, 2 s, kill) is fixed
and signals only the direct child; an agent command that is a wrapper (``npx``, a shell script)
would leave its real agent behind. Here the process gets its own process group
(``start_new_session``) and :meth:`close` runs, each step only while the agent is still there:

1. ``session/close`` when the agent advertises ``sessionCapabilities.close`` (bounded by the
   grace period);
2. stdin closed (EOF), then up to one grace period for the agent to exit;
3. ``SIGTERM`` to the process group, then up to one grace period;
4. ``SIGKILL`` to the process group.

As soon as the agent has exited (for whatever reason), whatever is left in its process group is
killed, so nothing leaks.
stderr goes to a log file (never a pipe nobody reads, as the SDK would make: a full pipe blocks
the agent); stdout lines may be up to 50 MiB.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TypeVar, cast

from acp import PROTOCOL_VERSION, Client, RequestError, connect_to_agent, text_block
from acp.client.connection import ClientSideConnection
from acp.connection import StreamObserver
from acp.schema import AgentCapabilities, ClientCapabilities, Implementation
from acp.transports import default_environment

from clawline import __version__
from clawline.acp_client.link import NO_SESSION_LOAD, error_text
from clawline.collab.acp.callbacks import RuntimeClient
from clawline.errors import AcpAgentError

__all__ = ["STDOUT_LINE_LIMIT", "AcpAgentError", "AgentCommand", "AgentProcess"]

log = logging.getLogger("clawline.collab.acp")

STDOUT_LINE_LIMIT = 50 * 1024 * 1024
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class AgentCommand:
    agent_id: str
    argv: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    stderr_path: Path | None = None
    """Appended to; ``None`` = the gateway's own stderr."""


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
        self.process: asyncio.subprocess.Process | None = None
        self.connection: ClientSideConnection | None = None
        self.capabilities = AgentCapabilities()
        self.session_id: str | None = None
        self._stderr: IO[bytes] | None = None
        self._closing: asyncio.Task[None] | None = None
        self._reaper: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None and not self.closing

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
        command = self.command
        env = {**default_environment(), **command.env}
        if command.stderr_path is not None:
            command.stderr_path.parent.mkdir(parents=True, exist_ok=True)
            self._stderr = command.stderr_path.open("ab")
        try:
            self.process = await asyncio.create_subprocess_exec(
                *command.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=self._stderr,
                env=env,
                cwd=cwd,
                start_new_session=True,
                limit=STDOUT_LINE_LIMIT,
            )
        except OSError as error:
            raise AcpAgentError(f"ACP agent could not be started: {error}") from error
        process = self.process
        self._reaper = asyncio.ensure_future(self._reap(process))
        assert process.stdin is not None
        assert process.stdout is not None
        # The SDK looks client methods up by name; the ones RuntimeClient lacks (fs, terminals,
        # elicitation) answer -32601, which is right for a client that advertises none of them.
        client = cast(Client, self.client)
        self.connection = connect_to_agent(
            client, process.stdin, process.stdout, observers=self.observers
        )
        connection = self.connection
        initialized = await self._call(
            connection.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="clawline", version=__version__),
            )
        )
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
        """Await one request, raced against the process exiting; errors as
        :class:`AcpAgentError` with the agent's text."""
        process = self.process
        assert process is not None
        waiting = asyncio.ensure_future(request)
        exited = asyncio.ensure_future(process.wait())
        try:
            await asyncio.wait({waiting, exited}, return_when=asyncio.FIRST_COMPLETED)
            if waiting.done():
                return waiting.result()
            raise AcpAgentError(f"ACP process exited with code {exited.result()}")
        except RequestError as error:
            raise AcpAgentError(error_text(error)) from error
        except ConnectionError as error:
            raise AcpAgentError(await self._gone_text(error)) from error
        except AcpAgentError:
            raise
        except Exception as error:  # e.g. an answer the SDK's models refuse
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise AcpAgentError(f"invalid ACP answer: {type(error).__name__} {first}") from error
        finally:
            exited.cancel()
            if not waiting.done():
                waiting.cancel()
                with contextlib.suppress(BaseException):
                    await waiting

    async def _gone_text(self, error: BaseException) -> str:
        if self.process is not None:
            with contextlib.suppress(TimeoutError):
                code = await asyncio.wait_for(self.process.wait(), 1.0)
                return f"ACP process exited with code {code}"
        return str(error) or "ACP connection closed"

    # --- turns -----------------------------------------------------------------------------

    def prompt(self, text: str) -> asyncio.Task[str]:
        """Send ``session/prompt`` with one text block; the task's result is the
        ``stopReason`` (errors: :class:`AcpAgentError`)."""
        connection, session_id = self.connection, self.session_id
        if connection is None or session_id is None or not self.alive:
            raise AcpAgentError(f"ACP agent {self.command.agent_id} is not running")

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
        process = self.process
        try:
            if process is not None and process.returncode is None:
                await self._close_session()
                await self._stop(process)
            if self._reaper is not None:
                await self._reaper
        finally:
            if self.connection is not None:
                with contextlib.suppress(Exception):
                    await self.connection.close()
            if self._stderr is not None:
                self._stderr.close()

    async def _reap(self, process: asyncio.subprocess.Process) -> None:
        """Once the agent has exited, kill what is left of its process group — at once, while
        the group id cannot have been reused."""
        await process.wait()
        self._kill_group(process.pid, signal.SIGKILL)

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

    async def _stop(self, process: asyncio.subprocess.Process) -> None:
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                process.stdin.close()
        if await self._exited(process):
            return
        log.info("ACP agent %s (pid %d) did not exit on EOF", self.command.agent_id, process.pid)
        self._kill_group(process.pid, signal.SIGTERM)
        if await self._exited(process):
            return
        log.warning("ACP agent %s (pid %d) ignored SIGTERM", self.command.agent_id, process.pid)
        self._kill_group(process.pid, signal.SIGKILL)
        await process.wait()

    async def _exited(self, process: asyncio.subprocess.Process) -> bool:
        try:
            await asyncio.wait_for(process.wait(), self.grace_s)
        except TimeoutError:
            return False
        return True

    @staticmethod
    def _kill_group(pgid: int, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
