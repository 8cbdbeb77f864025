"""``chat.inject``: an assistant message appended to a session without running the agent."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from clawline.agents.messages import MESSAGE_EVENT, assistant_message, check_message
from clawline.errors import InvalidField
from clawline.records.transcript import message_json
from clawline.types import JSONObject

if TYPE_CHECKING:
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.workers import StoreWorkers

MAX_INJECT_LABEL = 100


async def inject_message(
    session_key: str,
    message: str,
    label: str | None = None,
    *,
    catalog: SessionCatalog,
    workers: StoreWorkers,
) -> JSONObject:
    """Append ``{role:"assistant", content, stopReason:"injected", injected:true, label?}`` to
    an existing session (``session not found: <key>`` otherwise) and publish it with a one-off
    run id ``inject-<uuid>`` (the gateway shows it as ``session.message`` and as that run's
    ``chat`` ``final``, so chat views show it); return the stored message (with ``id`` and
    ``seq``)."""
    key = catalog.canonical(session_key)
    text = check_message(message)
    if label is not None and (not isinstance(label, str) or len(label) > MAX_INJECT_LABEL):
        raise InvalidField(f"invalid label (use at most {MAX_INJECT_LABEL} characters)")
    extra: JSONObject = {"injected": True}
    if label:
        extra["label"] = label
    data = assistant_message(text, stop_reason="injected", extra=extra)
    event = await workers.run(
        catalog.append, key, MESSAGE_EVENT, data, inject_run_id=f"inject-{uuid.uuid4()}"
    )
    return message_json(event)
