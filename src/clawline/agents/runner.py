"""The runner seam: what produces a run's reply.

A :class:`Runner` gets a :class:`RunContext` and returns a :class:`RunOutput`. The run manager
does everything around it — queueing, the user and assistant transcript messages, entry status,
``chat``/``agent``/``sessions.changed`` events, timeouts, aborts, idempotency — so a runner
only turns a message (and the history) into streamed text and tool activity::

    class MyRunner:
        async def run(self, ctx: RunContext) -> RunOutput:
            history = await ctx.history()
            async for token in model.stream(history, system=ctx.extra_system_prompt):
                await ctx.emit_text(token)
            return RunOutput(stop_reason="stop", usage={"input": 12, "output": 34})

Cancellation: an abort, a timeout or a gateway shutdown cancels the runner's task
(``asyncio.CancelledError`` is raised at its current ``await``). A runner may also poll
``ctx.cancelled`` or await ``ctx.stop_requested`` between steps. It should let the
cancellation propagate; the manager waits :data:`~clawline.agents.run_manager.ABORT_GRACE_S` for it
and then ends the run anyway. An exception ends the run as ``failed`` with its message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

from clawline.agents.conversation import convert_all
from clawline.agents.providers.base import ModelMessage
from clawline.agents.run import Origin
from clawline.agents.stream import RunStream
from clawline.records.session import SessionEntry
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.sessions.catalog import CatalogTransaction

ToolPhase: TypeAlias = Literal["start", "update", "result"]


@dataclass(frozen=True, slots=True)
class RunOutput:
    """What a runner returns. ``text`` ``None`` means "what was streamed with
    :meth:`RunContext.emit_text`"."""

    text: str | None = None
    stop_reason: str = "stop"
    usage: Mapping[str, JSON] | None = None


class Runner(Protocol):
    async def run(self, ctx: RunContext) -> RunOutput: ...


HistoryLoader: TypeAlias = Callable[[int], Awaitable[list[JSONObject]]]
ModelHistoryLoader: TypeAlias = Callable[[int], Awaitable[list[ModelMessage]]]
MessageAppender: TypeAlias = Callable[[JSONObject], Awaitable[JSONObject]]
TransactionAppender: TypeAlias = Callable[["CatalogTransaction", JSONObject], None]


class RunContext:
    """One run as its runner sees it."""

    def __init__(
        self,
        *,
        run_id: str,
        session_key: str,
        session_id: str,
        agent_id: str,
        message: str,
        origin: Origin,
        attachments: Sequence[JSONObject],
        extra_system_prompt: str | None,
        lane: str | None,
        deliver: bool,
        thinking: str | None,
        timeout_ms: int,
        stream: RunStream,
        stop_requested: asyncio.Event,
        load_history: HistoryLoader,
        load_model_history: ModelHistoryLoader | None = None,
        message_seq: int | None = None,
        append_message: MessageAppender | None = None,
        entry: SessionEntry | None = None,
        append_in_transaction: TransactionAppender | None = None,
    ) -> None:
        self.run_id = run_id
        self.session_key = session_key
        self.session_id = session_id
        self.agent_id = agent_id
        self.message = message
        self.origin: Origin = origin
        self.attachments = attachments
        """Content blocks (``{type:"image"|"file", mimeType?, fileName?, data}``)."""
        self.extra_system_prompt = extra_system_prompt
        self.lane = lane
        self.deliver = deliver
        self.thinking = thinking
        self.timeout_ms = timeout_ms
        self.stop_requested = stop_requested
        """Set when the run is asked to stop (abort, timeout, shutdown)."""
        self.message_seq = message_seq
        """The transcript seq of this run's user message (``None`` if unknown)."""
        self.entry = entry
        """The session's entry as the transaction that started this run wrote it (``None``:
        not at hand, read it)."""
        self._stream = stream
        self._load_history = load_history
        self._load_model_history = load_model_history
        self._append = append_message
        self._append_in = append_in_transaction

    @property
    def cancelled(self) -> bool:
        return self.stop_requested.is_set()

    @property
    def text(self) -> str:
        """The assistant text streamed so far."""
        return self._stream.text

    async def emit_text(self, delta: str) -> None:
        """Stream a piece of assistant text (ignored once the run has ended)."""
        self._stream.assistant(delta)

    async def emit_tool(
        self,
        phase: ToolPhase,
        name: str,
        tool_call_id: str,
        *,
        args: JSON = None,
        partial_result: JSON = None,
        result: JSON = None,
        is_error: bool | None = None,
    ) -> None:
        """Report tool activity as an ``agent`` event (stream ``tool``)."""
        data: JSONObject = {"phase": phase, "name": name, "toolCallId": tool_call_id}
        optional: dict[str, JSON] = {
            "args": args,
            "partialResult": partial_result,
            "result": result,
            "isError": is_error,
        }
        data.update({key: value for key, value in optional.items() if value is not None})
        self._stream.tool(data)

    async def history(self, limit: int = 200) -> list[JSONObject]:
        """The session's last ``limit`` messages, oldest first, this run's user message
        included (as clients see them: ``{role, content, id, seq, timestamp, …}``)."""
        return await self._load_history(limit)

    async def model_history(self, limit: int = 200) -> list[ModelMessage]:
        """:meth:`history` as a model reads it (:func:`~clawline.agents.conversation.convert_all`:
        messages a model does not read are left out), in transcript order, not yet paired.
        From turn to turn of a session these are the same objects, and only what followed the
        last read is read (:mod:`clawline.agents.recent_history`)."""
        if self._load_model_history is None:
            return convert_all(await self._load_history(limit))
        return await self._load_model_history(limit)

    async def append_message(self, message: Mapping[str, JSON]) -> JSONObject:
        """Append a message to the session's transcript and publish it (``session.message``,
        ``sessions.changed {phase:"message"}``); ``runId`` is added. Returns the message as
        clients see it (with ``id``, ``seq``, ``timestamp``).

        For the messages of a turn *before* its reply — the assistant's tool-call messages and
        the tool results. The final assistant reply is appended by the run manager (from
        :class:`RunOutput`), once, after the runner returns.
        """
        if self._append is None:
            raise RuntimeError("this run context cannot append transcript messages")
        data: JSONObject = dict(message)
        data.setdefault("runId", self.run_id)
        return await self._append(data)

    @property
    def appends_in_transactions(self) -> bool:
        """Whether :meth:`append_in_transaction` can be used."""
        return self._append_in is not None

    def append_in_transaction(self, work: CatalogTransaction, message: Mapping[str, JSON]) -> None:
        """:meth:`append_message` inside a catalog transaction someone else runs (blocking,
        on a store worker): the message commits with that transaction's other writes and is
        published after its commit (a tool's result with the effect it reports:
        ``ToolContext.record_result``)."""
        if self._append_in is None:
            raise RuntimeError("this run context cannot append transcript messages")
        data: JSONObject = dict(message)
        data.setdefault("runId", self.run_id)
        self._append_in(work, data)
