"""``chat.inject``: an assistant message appended to a session without running the agent."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from clawline.agents.messages import MESSAGE_EVENT, assistant_message, check_message
from clawline.agents.stream import RunStream
from clawline.errors import InvalidField
from clawline.sessions.notify import SessionNotifier, message_json
from clawline.types import JSONObject

if TYPE_CHECKING:
    from clawline.services import Services

__all__ = ["MAX_INJECT_LABEL", "inject_message"]

MAX_INJECT_LABEL = 100


async def inject_message(
    services: Services,
    notifier: SessionNotifier,
    session_key: str,
    message: str,
    label: str | None = None,
) -> JSONObject:
    """Append ``{role:"assistant", content, stopReason:"injected", injected:true, label?}`` to
    an existing session (``session not found: <key>`` otherwise), publish it as
    ``session.message`` and as a ``chat`` ``final`` of a one-off run id ``inject-<uuid>`` so
    chat views show it; return the stored message (with ``id`` and ``seq``)."""
    key = services.catalog.canonical(session_key)
    text = check_message(message)
    if label is not None and (not isinstance(label, str) or len(label) > MAX_INJECT_LABEL):
        raise InvalidField(f"invalid label (use at most {MAX_INJECT_LABEL} characters)")
    extra: JSONObject = {"injected": True}
    if label:
        extra["label"] = label
    data = assistant_message(text, stop_reason="injected", extra=extra)
    event = await services.call(services.catalog.append, key, MESSAGE_EVENT, data)
    await notifier.message(key, event)
    stored = message_json(event)
    stream = RunStream(
        services.bus, services.clock, run_id=f"inject-{uuid.uuid4()}", session_key=key
    )
    stream.chat("final", message=stored, stopReason="injected")
    return stored
