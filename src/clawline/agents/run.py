"""One run: its record while it is queued or running, and its outcome once it has ended.

Terminal entry status (OpenClaw's run state): a lifecycle ``error`` → ``failed``; a user abort
(``stopReason:"aborted"``) → ``killed``; an abort by the run's timer (``aborted`` without that
stop reason) → ``timeout``; otherwise ``done``.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from clawline.errors import Unavailable
from clawline.records.outbox import OutboxKind, OutboxTarget
from clawline.records.session import SessionEntry
from clawline.records.transcript import TranscriptEvent
from clawline.types import JSON, JSONObject, SessionStatus

Origin: TypeAlias = Literal["chat", "agent"]


class RunsClosed(Unavailable):
    """The run manager is shutting down and accepts no new runs."""


class RunState(enum.Enum):
    PENDING = "pending"
    """Accepted; its user message is being written."""
    QUEUED = "queued"
    RUNNING = "running"
    ENDED = "ended"


class StopRequest(enum.Enum):
    ABORT = "aborted"
    """``chat.abort`` / ``sessions.abort`` / gateway shutdown: the run ends ``killed``."""
    TIMEOUT = "timeout"


def terminal_status(*, error: bool, stop_reason: str | None, aborted: bool) -> SessionStatus:
    """OpenClaw's rules (module docstring), in their order."""
    if error:
        return "failed"
    if stop_reason == "aborted":
        return "killed"
    if aborted:
        return "timeout"
    return "done"


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How a run ended. Kept in the idempotency cache and the store for replays and
    ``agent.wait``."""

    run_id: str
    session_key: str
    status: SessionStatus
    accepted_at: int
    started_at: int | None
    ended_at: int
    text: str = ""
    stop_reason: str = "stop"
    error: str | None = None
    usage: Mapping[str, JSON] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "done"

    @property
    def reply_status(self) -> str:
        """``ok`` | ``error`` | ``timeout`` | ``aborted``: the status of the cached response."""
        return {"done": "ok", "failed": "error", "timeout": "timeout"}.get(self.status, "aborted")

    @property
    def summary(self) -> str:
        if self.status == "done":
            return "completed"
        if self.status == "killed":
            return "aborted"
        return self.error or self.status

    def response(self) -> JSONObject:
        """The terminal response replayed for a repeated idempotency key (``chat.send``) and
        sent as the ``agent`` method's second answer."""
        out: JSONObject = {
            "runId": self.run_id,
            "status": self.reply_status,
            "summary": self.summary,
            "acceptedAt": self.accepted_at,
            "startedAt": self.started_at,
            "endedAt": self.ended_at,
        }
        if self.ok:
            runtime = self.ended_at - (self.started_at or self.ended_at)
            out["result"] = {
                "text": self.text,
                "payloads": [{"text": self.text}],
                "stopReason": self.stop_reason,
                "usage": dict(self.usage) if self.usage is not None else None,
                "meta": {"durationMs": runtime, "sessionKey": self.session_key},
            }
        return out

    def wait_result(self) -> JSONObject:
        """``agent.wait``'s answer: ``done`` → ``ok``, ``timeout`` → ``timeout``, ``failed``
        and ``killed`` → ``error`` (with ``error`` "aborted" for a killed run)."""
        status = {"done": "ok", "timeout": "timeout"}.get(self.status, "error")
        out: JSONObject = {"runId": self.run_id, "status": status}
        if self.started_at is not None:
            out["startedAt"] = self.started_at
        out["endedAt"] = self.ended_at
        if status != "ok":
            out["error"] = self.error or ("aborted" if self.status == "killed" else self.status)
        return out


@dataclass(eq=False)
class Run:
    """A run while it is pending, queued or running (owned by the run manager)."""

    run_id: str
    dedupe_key: str
    session_key: str
    message: str
    origin: Origin
    timeout_ms: int
    accepted_at: int
    attachments: Sequence[JSONObject] = ()
    extra_system_prompt: str | None = None
    lane: str | None = None
    deliver: bool = False
    delivery: OutboxTarget | None = None
    """Where the reply goes besides the transcript (a channel conversation): the final
    assistant message is queued in the channel outbox in the transaction that stores it."""
    delivery_kind: OutboxKind = "reply"
    """What the queued reply is: ``reply``, or ``completion`` for a requester's answer to its
    children's completions."""
    thinking: str | None = None
    bypass_queue: bool = False
    """Runs on the session's nested lane: it does not wait behind the session's other runs
    (see :meth:`RunManager.send`)."""
    session_id: str | None = None
    message_seq: int | None = None
    key_pending: bool = False
    """The run's idempotency key is in the store without its outcome yet (see
    :mod:`clawline.agents.run_keys`)."""
    place: bool = False
    """A spawned child's first run: on a shared store it may run on the least loaded instance
    (:mod:`clawline.agents.handoff`)."""
    owned: bool = False
    """The store names this process's gateway instance as the run's owner (``run_owners``),
    until the run's end hooks are done (:mod:`clawline.instances`)."""
    slot_held: bool = False
    """The run holds a slot of its lane's limit already (its start was claimed)."""
    start_written: SessionEntry | None = None
    """The entry as the accepting transaction wrote it ``running`` (the run's start was
    claimed); the run then tells the start without writing it again."""
    first_run: bool = False
    """With :attr:`start_written`: the session had not run before."""
    opening: TranscriptEvent | None = None
    """With :attr:`start_written`: the run's user message when it opened the transcript
    (seq 1). The run's first history read, before it appends anything, is then that message,
    as the accepting transaction left the transcript, and reads nothing."""
    end_written: bool = False
    """The run's end transaction committed (with what the end writers added to it)."""
    state: RunState = RunState.PENDING
    started_at: int | None = None
    stop: StopRequest | None = None
    accepted: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the user message is written and published and ``send``'s caller has resumed;
    execution waits for it."""
    stop_requested: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Future[RunOutcome] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    @property
    def active(self) -> bool:
        return self.state is not RunState.ENDED

    def request_stop(self, reason: StopRequest) -> None:
        if self.stop is None:
            self.stop = reason
        self.stop_requested.set()


@dataclass(frozen=True, slots=True)
class SendAck:
    """What :meth:`RunManager.send` answers.

    - ``status``: ``"started"`` (a new run was accepted), ``"in_flight"`` (the key's run is
      still queued or running) or the cached terminal status (``ok``, ``error``, ``timeout``,
      ``aborted``) when the key's run already ended;
    - ``cached``: the cached terminal response (:meth:`RunOutcome.response`) or ``None``;
    - ``message_seq``: the transcript seq of the appended user message (``None`` unless
      ``started``);
    - ``done``: resolves with the run's :class:`RunOutcome` (already resolved when cached).
      Await it through :func:`asyncio.shield` so that a cancelled caller leaves it alone.
    """

    run_id: str
    status: str
    cached: JSONObject | None
    message_seq: int | None
    accepted_at: int
    session_key: str
    done: asyncio.Future[RunOutcome]
    instance_id: str | None = None
    """The gateway instance the run was handed to; ``None``: it runs here."""

    def to_json(self) -> JSONObject:
        """The ``chat.send`` answer."""
        if self.cached is not None:
            return dict(self.cached)
        return {"runId": self.run_id, "status": self.status}
