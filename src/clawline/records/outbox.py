"""Value types of the channel outbox: one row per message to deliver to one conversation.

A row is written in the same transaction as what it delivers (the assistant message of a run
whose reply goes to a channel, an explicit send), so a crash can lose neither: the delivery loop
(:mod:`clawline.channels.outbox_delivery`) sends pending rows, retries with backoff and marks
each row ``delivered`` or ``failed`` once. ``dedupe_key`` is unique: the same message for the
same target is queued once, however often its writer runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from clawline.types import JSON, EpochMs, JSONObject

OutboxStatus: TypeAlias = Literal["pending", "delivered", "failed"]
OUTBOX_STATUSES: tuple[OutboxStatus, ...] = ("pending", "delivered", "failed")
OutboxKind: TypeAlias = Literal["reply", "completion", "announce", "send"]
OUTBOX_KINDS: tuple[OutboxKind, ...] = ("reply", "completion", "announce", "send")


@dataclass(frozen=True, slots=True)
class OutboxTarget:
    """A conversation on a channel: OpenClaw's ``{channel, accountId, to, threadId}``."""

    channel: str
    account_id: str
    to: str
    thread_id: str | None = None

    def describe(self) -> str:
        where = f"{self.channel}/{self.account_id}/{self.to}"
        return f"{where}#{self.thread_id}" if self.thread_id else where

    def to_json(self) -> JSONObject:
        out: JSONObject = {"channel": self.channel, "accountId": self.account_id, "to": self.to}
        if self.thread_id is not None:
            out["threadId"] = self.thread_id
        return out


WEBCHAT_CHANNEL = "webchat"
"""The web chat reads transcripts itself: nothing is queued for it."""


def _text(value: object) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value.strip() if isinstance(value, str) and value.strip() else None


def origin_target(extra: Mapping[str, JSON]) -> OutboxTarget | None:
    """Where a session's channel traffic last came from — ``lastChannel``, ``lastTo``,
    ``lastAccountId``, ``lastThreadId`` of its entry's ``extra`` — as an outbox target;
    ``None`` without one, or for the web chat."""
    channel = (_text(extra.get("lastChannel")) or "").lower()
    to = _text(extra.get("lastTo"))
    if not channel or channel == WEBCHAT_CHANNEL or to is None:
        return None
    account = _text(extra.get("lastAccountId")) or "default"
    return OutboxTarget(channel, account, to, _text(extra.get("lastThreadId")))


@dataclass(frozen=True, slots=True)
class OutboxItem:
    target: OutboxTarget
    text: str
    kind: OutboxKind
    dedupe_key: str
    created_at: EpochMs
    session_key: str | None = None
    run_id: str | None = None
    id: int | None = None
    status: OutboxStatus = "pending"
    attempts: int = 0
    next_attempt_at: EpochMs = 0
    last_error: str | None = None
    delivered_at: EpochMs | None = None
    remote_id: str | None = None
    """The channel's id of the delivered message (a Matrix event id, a Telegram message id)."""

    def to_json(self) -> JSONObject:
        out: JSONObject = {
            "id": self.id,
            "status": self.status,
            "kind": self.kind,
            "target": self.target.to_json(),
            "text": self.text,
            "createdAt": self.created_at,
            "attempts": self.attempts,
            "nextAttemptAt": self.next_attempt_at,
        }
        optional = {
            "sessionKey": self.session_key,
            "runId": self.run_id,
            "lastError": self.last_error,
            "deliveredAt": self.delivered_at,
            "remoteId": self.remote_id,
        }
        out.update({name: value for name, value in optional.items() if value is not None})
        return out
