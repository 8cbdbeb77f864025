"""Publishing session events: ``sessions.changed`` and ``session.message``.

Payloads follow OpenClaw's shape: the row snapshot's fields are flattened into the payload and
the whole row is also sent under ``session``; ``ts`` is always set. Both events are
*drop-if-slow*: a lagging client recovers by replaying or re-listing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawline.events import Audience
from clawline.sessions.entry import SessionEntry
from clawline.sessions.rows import RowBuilder, RowOptions
from clawline.sessions.transcript import TranscriptEvent
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.services import Services

__all__ = ["SessionNotifier", "message_json"]


def message_json(event: TranscriptEvent) -> JSONObject:
    """A transcript message as clients see it: its data plus ``{id, seq}`` meta."""
    message: JSONObject = dict(event.data)
    message.setdefault("id", f"{event.session_id}:{event.seq}")
    message["seq"] = event.seq
    message.setdefault("timestamp", event.ts)
    return message


class SessionNotifier:
    def __init__(self, services: Services) -> None:
        self._services = services

    def rows(self) -> RowBuilder:
        return RowBuilder(self._services.store, self._services.runs.has_active_run)

    def _row_now(self, key: str) -> JSONObject | None:
        """Build a row on the store thread (called through ``Services.call``)."""
        entry = self._services.store.get(key)
        return None if entry is None else self.rows().one(entry, RowOptions(derived_titles=True))

    async def row(self, key: str) -> JSONObject | None:
        return await self._services.call(self._row_now, key)

    def _payload(self, key: str, row: JSONObject | None, fields: dict[str, JSON]) -> JSONObject:
        payload: JSONObject = dict(row) if row is not None else {}
        payload.update({name: value for name, value in fields.items() if value is not None})
        payload["sessionKey"] = key
        payload["ts"] = self._services.clock.now_ms()
        if row is not None:
            payload["session"] = row
        return payload

    async def changed(
        self,
        key: str,
        *,
        reason: str,
        phase: str | None = None,
        run_id: str | None = None,
        deleted: SessionEntry | None = None,
    ) -> None:
        """Publish ``sessions.changed`` for ``key`` with a fresh row snapshot (none when the
        session was deleted)."""
        row = None if deleted is not None else await self.row(key)
        payload = self._payload(key, row, {"reason": reason, "phase": phase, "runId": run_id})
        self._services.bus.publish(
            "sessions.changed",
            payload,
            audience=Audience.SESSIONS,
            session_key=key,
            drop_if_slow=True,
        )

    async def message(self, key: str, event: TranscriptEvent, *, run_id: str | None = None) -> None:
        """Publish ``session.message`` and then ``sessions.changed`` with ``phase:"message"``."""
        row = await self.row(key)
        message = message_json(event)
        fields: dict[str, JSON] = {
            "messageId": message["id"],
            "messageSeq": event.seq,
            "runId": run_id,
        }
        payload = self._payload(key, row, {**fields, "message": message})
        bus = self._services.bus
        bus.publish(
            "session.message",
            payload,
            audience=Audience.SESSION_STREAM,
            session_key=key,
            drop_if_slow=True,
        )
        bus.publish(
            "sessions.changed",
            self._payload(key, row, {**fields, "phase": "message"}),
            audience=Audience.SESSIONS,
            session_key=key,
            drop_if_slow=True,
        )
