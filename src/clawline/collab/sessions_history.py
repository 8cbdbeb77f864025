"""Reading another session's messages for a session tool (docs/collaboration.md).

:func:`read_history` reads the last ``limit`` transcript messages, drops tool messages unless
asked for them, sanitises every message (:mod:`clawline.collab.sanitize`) and fits the result
into :data:`HISTORY_MAX_BYTES` of JSON: the oldest messages go first; a newest message that
alone is too large becomes ``[sessions_history omitted: message too large]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson

from clawline.agents.chat_history import read_messages
from clawline.collab.sanitize import sanitize_message
from clawline.records.transcript import message_json
from clawline.store.base import Store
from clawline.types import JSON, JSONObject

HISTORY_MAX_BYTES = 80 * 1024
HISTORY_DEFAULT_LIMIT = 200
HISTORY_MAX_LIMIT = 1000
OMITTED_TEXT = "[sessions_history omitted: message too large]"
_TOOL_ROLES = frozenset({"tool", "toolResult", "tool_result"})


@dataclass(frozen=True, slots=True)
class History:
    messages: list[JSONObject]
    dropped: bool
    """Older messages were left out to fit the byte budget."""
    content_truncated: bool
    content_redacted: bool
    bytes: int

    @property
    def truncated(self) -> bool:
        return self.dropped or self.content_truncated


def is_tool_message(message: Mapping[str, JSON]) -> bool:
    return message.get("role") in _TOOL_ROLES


def _without_tool_calls(message: JSONObject) -> JSONObject | None:
    """An assistant message without its tool calls; ``None`` when nothing else is left."""
    if "toolCalls" not in message:
        return message
    kept = {name: value for name, value in message.items() if name != "toolCalls"}
    content = kept.get("content")
    if not content or (
        isinstance(content, Sequence)
        and not isinstance(content, str)
        and not any(isinstance(block, Mapping) and block.get("text") for block in content)
    ):
        return None
    return kept


def _size(value: object) -> int:
    return len(orjson.dumps(value))


def fit_bytes(messages: list[JSONObject], budget: int) -> tuple[list[JSONObject], bool, int]:
    """The newest messages whose JSON array fits ``budget``: ``(kept, hard_capped, bytes)``.
    At least the newest message is kept, replaced by a placeholder when it alone is too big."""
    kept: list[JSONObject] = []
    used = 2  # the brackets
    for message in reversed(messages):
        size = _size(message) + (1 if kept else 0)
        if used + size > budget:
            break
        kept.append(message)
        used += size
    kept.reverse()
    if kept or not messages:
        return kept, False, _size(kept)
    newest = messages[-1]
    placeholder: JSONObject = {"role": "assistant", "content": OMITTED_TEXT}
    if "seq" in newest:
        placeholder["seq"] = newest["seq"]
    return [placeholder], True, _size([placeholder])


def recent_messages(
    store: Store, session_id: str, limit: int, *, include_tools: bool = False
) -> list[JSONObject]:
    """The last ``limit`` transcript messages as clients see them, tool messages (and the tool
    calls of assistant messages) dropped unless ``include_tools`` (blocking)."""
    raw = [message_json(event) for event in read_messages(store, session_id, limit)]
    if include_tools:
        return raw
    out: list[JSONObject] = []
    for message in raw:
        if is_tool_message(message):
            continue
        kept = _without_tool_calls(message)
        if kept is not None:
            out.append(kept)
    return out


def read_history(
    store: Store, session_id: str | None, limit: int, *, include_tools: bool
) -> History:
    """See the module docstring (blocking: runs on the store thread)."""
    selected = (
        []
        if session_id is None
        else recent_messages(store, session_id, limit, include_tools=include_tools)
    )
    sanitized = [sanitize_message(message) for message in selected]
    content_truncated = any(item.truncated for item in sanitized)
    redacted = any(item.redacted for item in sanitized)
    kept, hard_capped, size = fit_bytes([item.message for item in sanitized], HISTORY_MAX_BYTES)
    dropped = hard_capped or len(kept) < len(selected)
    return History(kept, dropped, content_truncated, redacted, size)
