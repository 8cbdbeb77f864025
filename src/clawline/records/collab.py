"""Value types of the collaboration tables: sub-agent run records, announce inbox rows and
thread bindings. The task record lives in :mod:`clawline.records.task`.

Field names are snake_case here; ``to_json`` gives OpenClaw's camelCase names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from clawline.records.outbox import OutboxTarget
from clawline.types import JSON, EpochMs, JSONObject

FROZEN_RESULT_MAX_BYTES = 100 * 1024
"""The most UTF-8 bytes a run's ``frozenResultText`` may hold (OpenClaw's cap, 100 KiB)."""

BindingPlacement: TypeAlias = Literal["current", "child"]
BINDING_PLACEMENTS: tuple[str, ...] = ("current", "child")


def cap_result_text(text: str, limit: int = FROZEN_RESULT_MAX_BYTES) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, never inside a character."""
    data = text.encode()
    if len(data) <= limit:
        return text
    return data[:limit].decode(errors="ignore")


@dataclass(frozen=True, slots=True)
class SubagentRun:
    """A sub-agent (or ACP) run started by ``sessions_spawn`` (OpenClaw's ``SubagentRunRecord``).

    ``controller_session_key`` ``None`` means the requester controls the run (see
    :attr:`controller`). ``ended_at is None`` means the run is active.

    ``spawn_key`` is the spawn's durable key, ``<requester session id>/<tool call id>``
    (:mod:`clawline.collab.spawn_key`): unique per requester, so a spawn redone after a crash
    finds the child it already made. ``None`` for runs recorded without one.
    """

    run_id: str
    child_session_key: str
    requester_session_key: str
    task: str
    created_at: EpochMs
    controller_session_key: str | None = None
    requester_origin: Mapping[str, JSON] | None = None
    requester_display_key: str | None = None
    cleanup: str = "keep"
    label: str | None = None
    model: str | None = None
    workspace_dir: str | None = None
    run_timeout_seconds: int | None = None
    spawn_mode: str | None = None
    runtime: str = "subagent"
    started_at: EpochMs | None = None
    ended_at: EpochMs | None = None
    outcome: Mapping[str, JSON] | None = None
    archive_at_ms: EpochMs | None = None
    cleanup_completed_at: EpochMs | None = None
    suppress_announce_reason: str | None = None
    expects_completion_message: bool | None = None
    ended_reason: str | None = None
    frozen_result_text: str | None = None
    completion_announced_at: EpochMs | None = None
    task_id: str | None = None
    spawn_key: str | None = None
    instance_id: str | None = None
    """The gateway instance answering for the record while it is active (it watches the
    child's run, and holds a deferred orchestrator's result): the one that wrote it."""
    deferred_outcome: Mapping[str, JSON] | None = None
    """A deferred orchestrator's latest finished turn (``{status, text, usage}``): its result
    once nothing it spawned is pending (:mod:`clawline.collab.subagents`)."""

    @property
    def controller(self) -> str:
        return self.controller_session_key or self.requester_session_key

    @property
    def active(self) -> bool:
        return self.ended_at is None

    def to_json(self) -> JSONObject:
        return {
            "runId": self.run_id,
            "childSessionKey": self.child_session_key,
            "controllerSessionKey": self.controller,
            "requesterSessionKey": self.requester_session_key,
            "requesterOrigin": None
            if self.requester_origin is None
            else dict(self.requester_origin),
            "requesterDisplayKey": self.requester_display_key,
            "task": self.task,
            "cleanup": self.cleanup,
            "label": self.label,
            "model": self.model,
            "workspaceDir": self.workspace_dir,
            "runTimeoutSeconds": self.run_timeout_seconds,
            "spawnMode": self.spawn_mode,
            "runtime": self.runtime,
            "createdAt": self.created_at,
            "startedAt": self.started_at,
            "endedAt": self.ended_at,
            "outcome": None if self.outcome is None else dict(self.outcome),
            "archiveAtMs": self.archive_at_ms,
            "cleanupCompletedAt": self.cleanup_completed_at,
            "suppressAnnounceReason": self.suppress_announce_reason,
            "expectsCompletionMessage": self.expects_completion_message,
            "endedReason": self.ended_reason,
            "frozenResultText": self.frozen_result_text,
            "completionAnnouncedAt": self.completion_announced_at,
            "taskId": self.task_id,
            "spawnKey": self.spawn_key,
        }


@dataclass(frozen=True, slots=True)
class InboxItem:
    """One durable completion waiting for (or delivered to) its requester.

    ``id`` grows with every row, so a requester's pending rows in ``id`` order are its
    completions in the order they were written. ``run_id`` is unique: one completion per run.
    """

    id: int
    requester_session_key: str
    child_session_key: str
    run_id: str
    task_id: str | None
    status: str
    payload: Mapping[str, JSON]
    created_at: EpochMs
    delivered_at: EpochMs | None = None
    delivery_seq: int | None = None
    """The transcript seq of the event that delivered it, when known."""

    @property
    def pending(self) -> bool:
        return self.delivered_at is None

    def to_json(self) -> JSONObject:
        return {
            "id": self.id,
            "requesterSessionKey": self.requester_session_key,
            "childSessionKey": self.child_session_key,
            "runId": self.run_id,
            "taskId": self.task_id,
            "status": self.status,
            "payload": dict(self.payload),
            "createdAt": self.created_at,
            "deliveredAt": self.delivered_at,
            "deliverySeq": self.delivery_seq,
        }


@dataclass(frozen=True, slots=True)
class ThreadBinding:
    """A conversation (thread) of a channel account bound to a session (docs/collaboration.md).

    ``idle_ms`` / ``max_age_ms`` of 0 mean no limit. A binding is active until ``unbound_at``
    is set; only one active binding may exist per ``(channel, account_id, conversation_id)``.
    ``id`` is given by the store when the binding is written.
    """

    channel: str
    account_id: str
    conversation_id: str
    session_key: str
    placement: str
    bound_at: EpochMs
    last_activity_at: EpochMs
    idle_ms: int = 0
    max_age_ms: int = 0
    unbound_at: EpochMs | None = None
    unbind_reason: str | None = None
    parent_conversation_id: str | None = None
    """The room or chat a bound thread lies in, where the channel needs it to post there
    (a Matrix thread is named by its root event; the room is needed to send into it)."""
    id: int | None = None

    @property
    def active(self) -> bool:
        return self.unbound_at is None

    def target(self) -> OutboxTarget:
        """Where a delivery to the bound conversation goes."""
        if self.parent_conversation_id is not None:
            return OutboxTarget(
                self.channel, self.account_id, self.parent_conversation_id, self.conversation_id
            )
        return OutboxTarget(self.channel, self.account_id, self.conversation_id)

    def expiry(self) -> tuple[EpochMs, str] | None:
        """When the binding expires and why: the earlier of ``max(lastActivityAt, boundAt) +
        idle`` (``idle-expired``) and ``boundAt + maxAge`` (``max-age-expired``); ``None``
        without limits. On a tie the max-age reason wins (it cannot be renewed)."""
        candidates: list[tuple[int, int, str]] = []
        if self.max_age_ms > 0:
            candidates.append((self.bound_at + self.max_age_ms, 0, "max-age-expired"))
        if self.idle_ms > 0:
            last = max(self.last_activity_at, self.bound_at)
            candidates.append((last + self.idle_ms, 1, "idle-expired"))
        if not candidates:
            return None
        at, _, reason = min(candidates)
        return at, reason

    def to_json(self) -> JSONObject:
        expiry = self.expiry()
        return {
            "id": self.id,
            "channel": self.channel,
            "accountId": self.account_id,
            "conversationId": self.conversation_id,
            "sessionKey": self.session_key,
            "placement": self.placement,
            "boundAt": self.bound_at,
            "lastActivityAt": self.last_activity_at,
            "idleMs": self.idle_ms,
            "maxAgeMs": self.max_age_ms,
            "expiresAt": None if expiry is None else expiry[0],
            "unboundAt": self.unbound_at,
            "unbindReason": self.unbind_reason,
            "parentConversationId": self.parent_conversation_id,
        }
