"""A gateway instance as registered in its store (table ``gateway_instances``; the interface is
:mod:`clawline.store.instances`, the lifecycle :mod:`clawline.instances`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from clawline.types import EpochMs, JSONObject


@dataclass(frozen=True, slots=True)
class InstanceRecord:
    """One gateway process that served (or serves) the store."""

    instance_id: str
    host: str
    pid: int
    started_at: EpochMs
    heartbeat_at: EpochMs
    lease_ms: int
    """The instance counts as alive until ``heartbeat_at + lease_ms``."""
    url: str | None = None
    """``ws://host:port`` once it serves."""
    stopped_at: EpochMs | None = None
    """Set by a clean stop."""
    recovered_at: EpochMs | None = None
    """Set when another instance took over what this one left (its lease had lapsed)."""
    recovered_by: str | None = None

    @property
    def running(self) -> bool:
        """Neither stopped nor taken over (it may still have lapsed)."""
        return self.stopped_at is None and self.recovered_at is None

    def alive(self, now: EpochMs) -> bool:
        """Running, with a heartbeat within its lease."""
        return self.running and now <= self.heartbeat_at + self.lease_ms

    def state(self, now: EpochMs) -> str:
        """``live``, ``lapsed`` (its lease ran out; not yet taken over), ``stopped`` or
        ``recovered``."""
        if self.stopped_at is not None:
            return "stopped"
        if self.recovered_at is not None:
            return "recovered"
        return "live" if self.alive(now) else "lapsed"

    def to_json(self, now: EpochMs) -> JSONObject:
        return {
            "instanceId": self.instance_id,
            "host": self.host,
            "pid": self.pid,
            "url": self.url,
            "startedAt": self.started_at,
            "heartbeatAt": self.heartbeat_at,
            "leaseMs": self.lease_ms,
            "stoppedAt": self.stopped_at,
            "recoveredAt": self.recovered_at,
            "recoveredBy": self.recovered_by,
            "state": self.state(now),
        }


@dataclass(frozen=True, slots=True)
class RunOwner:
    """The instance answering for an accepted run, from its acceptance until its end hooks are
    done (table ``run_owners``)."""

    run_id: str
    session_key: str
    instance_id: str
    accepted_at: EpochMs


@dataclass(frozen=True, slots=True)
class RunHandoff:
    """A run accepted on one instance for another to run (table ``run_handoffs``): a spawned
    child placed on the least loaded instance, or a message to a session whose run another
    instance owns. ``request`` holds what the target needs to start it (its message is already
    in the transcript, at ``request["messageSeq"]``)."""

    id: int
    run_id: str
    session_key: str
    target_instance: str
    created_at: EpochMs
    request: JSONObject


@dataclass(frozen=True, slots=True)
class RunStop:
    """An abort of runs another instance runs (table ``run_stops``): the runs of
    ``session_key`` on ``target_instance`` — only ``run_id`` when given."""

    id: int
    session_key: str
    run_id: str | None
    target_instance: str
    created_at: EpochMs


ClaimKind = Literal["acp", "channel"]
ACP_CLAIM: ClaimKind = "acp"
"""A persistent ACP child's agent process; the claim's name is the child's session key."""
CHANNEL_CLAIM: ClaimKind = "channel"
"""A channel connection; the claim's name is the channel id."""


@dataclass(frozen=True, slots=True)
class InstanceClaim:
    """Something one instance holds besides runs (table ``instance_claims``): a persistent ACP
    child's agent process (``kind`` ``acp``, ``name`` its session key) or a channel connection
    (``channel``, the channel id). A claim whose instance stopped running is free to take."""

    kind: str
    name: str
    instance_id: str
    claimed_at: EpochMs
