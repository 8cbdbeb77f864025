"""Reading a session's chat history: the last messages of its transcript, clipped to size.

Used by ``chat.history`` and by runners (``RunContext.history``). The reads are blocking; run
them on the store workers (``await workers.run(...)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson

from clawline.agents.messages import MESSAGE_EVENT
from clawline.records.transcript import TranscriptEvent, message_json
from clawline.store.base import Store
from clawline.types import JSON, JSONObject

HISTORY_DEFAULT_LIMIT = 200
HISTORY_MAX_LIMIT = 1000
HISTORY_DEFAULT_MAX_CHARS = 12_000
HISTORY_MAX_CHARS = 500_000
HISTORY_BUDGET_BYTES = 6 * 1024 * 1024
"""Total size of one ``chat.history`` answer's messages (encoded JSON)."""


def read_messages(store: Store, session_id: str, limit: int) -> list[TranscriptEvent]:
    """The last ``limit`` message events of a transcript, oldest first (other event types
    are skipped)."""
    return read_tail(store, session_id, limit).messages


@dataclass(frozen=True, slots=True)
class Tail:
    """The last message events of a transcript (:func:`read_tail`)."""

    messages: list[TranscriptEvent]
    last_seq: int
    """The transcript's newest seq when read (of any event type; 0: none)."""
    whole: bool
    """``messages`` are all the transcript's messages."""


def read_tail(store: Store, session_id: str, limit: int) -> Tail:
    """The last ``limit`` message events of a transcript, oldest first, and where it ended."""
    want = max(0, limit)
    window = want
    while want:
        events = store.tail(session_id, window)
        messages = [event for event in events if event.type == MESSAGE_EVENT]
        last_seq = events[-1].seq if events else 0
        if len(messages) >= want or len(events) < window:
            whole = len(events) < window and len(messages) <= want
            return Tail(messages[-want:], last_seq, whole)
        window *= 4
    return Tail([], 0, False)


def _truncated(text: str, max_chars: int) -> str:
    return f"{text[:max_chars]}…[truncated: {len(text) - max_chars} more characters]"


def _clip_block(block: JSON, max_chars: int) -> JSON:
    if not isinstance(block, Mapping):
        return block
    text = block.get("text")
    if isinstance(text, str) and len(text) > max_chars:
        return {**block, "text": _truncated(text, max_chars), "truncated": True}
    data = block.get("data")
    if isinstance(data, str) and len(data) > max_chars:
        clipped = {name: value for name, value in block.items() if name != "data"}
        return {**clipped, "omitted": True, "bytes": len(data) * 3 // 4}
    return dict(block)


def clip_message(message: Mapping[str, JSON], max_chars: int) -> JSONObject:
    """A copy whose text blocks hold at most ``max_chars`` characters (plus a marker saying
    how much was cut) and whose inline attachment data over ``max_chars`` is left out."""
    clipped: JSONObject = dict(message)
    content = message.get("content")
    if isinstance(content, str):
        if len(content) > max_chars:
            clipped["content"] = _truncated(content, max_chars)
            clipped["truncated"] = True
    elif isinstance(content, Sequence):
        clipped["content"] = [_clip_block(block, max_chars) for block in content]
    return clipped


def _placeholder(message: Mapping[str, JSON], size: int) -> JSONObject:
    kept = {name: message[name] for name in ("id", "seq", "role", "timestamp") if name in message}
    text = f"[message omitted: {size} bytes exceed the history budget]"
    return {**kept, "content": [{"type": "text", "text": text}], "omitted": True}


def fit_budget(messages: Sequence[JSONObject], budget: int) -> list[JSONObject]:
    """The newest messages whose encoded size fits ``budget``; older ones are dropped. A
    newest message that alone exceeds it is replaced by a placeholder."""
    kept: list[JSONObject] = []
    used = 0
    for message in reversed(messages):
        size = len(orjson.dumps(message))
        if used + size > budget:
            if not kept:
                kept.append(_placeholder(message, size))
            break
        kept.append(message)
        used += size
    kept.reverse()
    return kept


def history_messages(
    store: Store,
    session_id: str,
    *,
    limit: int = HISTORY_DEFAULT_LIMIT,
    max_chars: int = HISTORY_DEFAULT_MAX_CHARS,
    budget: int = HISTORY_BUDGET_BYTES,
) -> list[JSONObject]:
    """The last ``limit`` messages as clients see them, clipped and fitted to ``budget``."""
    events = read_messages(store, session_id, limit)
    return fit_budget([clip_message(message_json(event), max_chars) for event in events], budget)
