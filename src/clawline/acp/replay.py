"""``session/load``: a session's transcript → the ``session/update`` notifications that replay it.

The gateway's ``chat.history`` gives the messages oldest first (at most its window: the last
1,000 messages, 6 MiB). Each becomes, in order:

- ``user`` → ``user_message_chunk`` (without the bridge's ``[Working directory: …]`` prefix);
- ``assistant`` → ``agent_message_chunk`` for its text, then a ``tool_call`` (``pending``) for
  each of its ``toolCalls``;
- ``tool`` → ``tool_call_update`` ``completed``/``failed`` with ``rawOutput {details,
  isError}`` (a result whose call was not replayed first gets its ``tool_call``);
- other roles are skipped.

Every chunk carries ``messageId`` = the gateway message id (``<sessionId>:<seq>``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from clawline.acp.prompt import strip_cwd_prefix
from clawline.acp.run_updates import TOOL_KINDS, message_text, text_chunk, tool_update

HISTORY_LIMIT = 1000
HISTORY_MAX_CHARS = 500_000


def _tool_call(call_id: str, name: str, args: object, status: str) -> dict[str, Any]:
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": name,
        "kind": TOOL_KINDS.get(name, "other"),
        "status": status,
        "rawInput": args if isinstance(args, dict) else {},
    }


def _calls(message: Mapping[str, Any]) -> Iterator[tuple[str, str, object]]:
    raw = message.get("toolCalls")
    if not isinstance(raw, list):
        return
    for call in raw:
        if isinstance(call, dict) and isinstance(call.get("id"), str):
            name = call.get("name")
            yield call["id"], name if isinstance(name, str) else "tool", call.get("arguments")


def replay_updates(messages: list[Any]) -> Iterator[dict[str, Any]]:
    started: set[str] = set()
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        message_id = message.get("id") if isinstance(message.get("id"), str) else None
        text = message_text(message)
        if role == "user":
            text = strip_cwd_prefix(text)
            if text:
                yield text_chunk("user_message_chunk", text, message_id)
        elif role == "assistant":
            if text:
                yield text_chunk("agent_message_chunk", text, message_id)
            for call_id, name, args in _calls(message):
                started.add(call_id)
                yield _tool_call(call_id, name, args, "pending")
        elif role == "tool" and isinstance(message.get("toolCallId"), str):
            result_id = str(message["toolCallId"])
            failed = message.get("isError") is True
            if result_id not in started:
                started.add(result_id)
                tool = message.get("name")
                yield _tool_call(
                    result_id, tool if isinstance(tool, str) else "tool", {}, "pending"
                )
            output = {"details": message.get("details"), "isError": failed}
            yield tool_update(result_id, "failed" if failed else "completed", output)
