"""The histories runs read lately, kept so that a session's next turn reads only what followed.

A turn reads its session's last messages (up to
:data:`~clawline.agents.turn.TURN_HISTORY_LIMIT`) and converts them for the model. A requester
that takes one completion turn after another would read and convert its whole, growing
transcript every time: n turns over a history of m messages cost n·m. Transcript events never
change once written and a transcript's seqs grow by one per event in commit order (the seq is
taken under the transcript row's lock), so what a later read adds is exactly the events after
the newest seq seen: :meth:`RecentHistory.read` asks the store only for those. Other writers —
the announce delivery, ``chat.inject``, another gateway instance on the same catalog — are
seen the same way, since the read goes to the store. A reset starts a new session id, and so a
new history.

The converted messages are kept too, the same objects from turn to turn: the offline model
recognises a history it has seen by them (:class:`~clawline.agents.providers.offline._Prefixes`).

Held: the histories of the sessions read most recently, up to ``max_messages`` messages in all
(least recently read dropped first). A read asking for more messages than are held reads the
transcript afresh.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from clawline.agents.chat_history import read_tail
from clawline.agents.conversation import convert
from clawline.agents.messages import MESSAGE_EVENT
from clawline.agents.providers.base import ModelMessage
from clawline.records.transcript import TranscriptEvent, message_json
from clawline.store.base import Store

DEFAULT_MAX_MESSAGES = 50_000


@dataclass(frozen=True, slots=True)
class HistoryMessage:
    """A message event of a transcript and what a model reads of it (``None``: nothing)."""

    event: TranscriptEvent
    model: ModelMessage | None


@dataclass(frozen=True, slots=True)
class _Held:
    messages: list[HistoryMessage]
    last_seq: int
    whole: bool


def _converted(event: TranscriptEvent) -> HistoryMessage:
    return HistoryMessage(event, convert(message_json(event)))


class RecentHistory:
    """Recently read histories (module docstring). Thread-safe: reads run on store workers."""

    def __init__(self, *, max_messages: int = DEFAULT_MAX_MESSAGES) -> None:
        self._max = max_messages
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._count = 0
        self._lock = threading.Lock()
        self.fresh_reads = 0
        """How many reads went to the whole tail (a measure for tests)."""

    def read(self, store: Store, session_id: str, limit: int) -> list[HistoryMessage]:
        """The last ``limit`` messages of the transcript, oldest first (blocking)."""
        if limit <= 0:
            return []
        with self._lock:
            held = self._held.get(session_id)
        if held is not None and (held.whole or len(held.messages) >= limit):
            after = store.events(session_id, after_seq=held.last_seq, limit=limit + 1)
            if len(after) <= limit:
                added = [_converted(event) for event in after if event.type == MESSAGE_EVENT]
                messages = held.messages + added if added else held.messages
                whole = held.whole
                if len(messages) > limit:
                    messages, whole = messages[-limit:], False
                last_seq = after[-1].seq if after else held.last_seq
                self._keep(session_id, _Held(messages, last_seq, whole))
                return messages
        tail = read_tail(store, session_id, limit)
        self.fresh_reads += 1
        messages = [_converted(event) for event in tail.messages]
        self._keep(session_id, _Held(messages, tail.last_seq, tail.whole))
        return messages

    @property
    def held_messages(self) -> int:
        """How many messages are held, over all sessions."""
        with self._lock:
            return self._count

    def _keep(self, session_id: str, held: _Held) -> None:
        with self._lock:
            before = self._held.pop(session_id, None)
            if before is not None:
                self._count -= len(before.messages)
            if len(held.messages) > self._max:
                return
            self._held[session_id] = held
            self._count += len(held.messages)
            while self._count > self._max:
                _, dropped = self._held.popitem(last=False)
                self._count -= len(dropped.messages)
