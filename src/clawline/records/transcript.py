"""Transcript events: the append-only history of one session incarnation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from clawline.types import JSON, EpochMs, JSONObject


@dataclass(frozen=True, slots=True)
class TranscriptEvent:
    """One event of a transcript. ``seq`` counts from 1 within the session incarnation."""

    session_id: str
    seq: int
    ts: EpochMs
    type: str
    data: Mapping[str, JSON] = field(default_factory=lambda: MappingProxyType({}))

    def to_json(self) -> JSONObject:
        return {"seq": self.seq, "ts": self.ts, "type": self.type, "data": dict(self.data)}


@dataclass(frozen=True, slots=True)
class TranscriptInfo:
    """The header of a transcript: which session it belongs to and how long it is."""

    session_id: str
    session_key: str
    created_at: EpochMs
    last_seq: int
    archived_at: EpochMs | None = None
    archive_reason: str | None = None


def message_json(event: TranscriptEvent) -> JSONObject:
    """A transcript message as clients see it: its data plus ``{id, seq}`` meta."""
    message: JSONObject = dict(event.data)
    message.setdefault("id", f"{event.session_id}:{event.seq}")
    message["seq"] = event.seq
    message.setdefault("timestamp", event.ts)
    return message
