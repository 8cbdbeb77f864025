"""One session's row and its transcript branches.

- ``sessions.describe {key, agentId?, includeDerivedTitles?, includeLastMessage?}`` →
  ``{session: <row> | null}``: the row ``sessions.list`` would give (``null`` for no session);
- ``sessions.branches.list {sessionKey, agentId?}`` → ``{branches: [...]}``. A clawline
  transcript is linear, so a session has one branch, the active one, once it holds a message;
  none before, and none for an unknown session (OpenClaw's answers for those cases).
"""

from __future__ import annotations

from datetime import UTC, datetime

from clawline import keys
from clawline.agents.messages import MESSAGE_EVENT
from clawline.gateway.frames import GatewayError
from clawline.gateway.methods.sessions.common import required_key
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
from clawline.records.transcript import TranscriptEvent, message_json
from clawline.sessions.listing_rows import RowBuilder, RowOptions
from clawline.store.base import Store
from clawline.types import JSON, JSONObject

methods = MethodRegistry()

_KEY = P.string(required=True, min_len=1, max_len=keys.MAX_KEY_LENGTH)
_AGENT = P.string(min_len=1, max_len=128)
DESCRIBE = {
    "key": _KEY,
    "agentId": _AGENT,
    "includeDerivedTitles": P.boolean(),
    "includeLastMessage": P.boolean(),
}
BRANCHES = {"sessionKey": _KEY, "agentId": _AGENT}
HEADLINE_MAX_CHARS = 120
_PAGE = 1000


def _agent_checked(call: Call, name: str) -> str:
    """The canonical key of param ``name``; an ``agentId`` must be the key's agent."""
    key = required_key(call, name)
    agent = call.params.get("agentId")
    if agent is not None:
        owner = keys.agent_id_of(key, call.gateway.catalog.default_agent_id)
        if keys.normalize_agent_id(agent) != owner:
            raise GatewayError(
                f'agent "{agent.strip().lower()}" does not match session key agent "{owner}"'
            )
    return key


@methods.method("sessions.describe", scope=READ, schema=DESCRIBE)
async def sessions_describe(call: Call) -> JSON:
    key = _agent_checked(call, "key")
    gateway = call.gateway
    entry = await gateway.workers.run(gateway.catalog.get, key)
    if entry is None:
        return {"session": None}
    options = RowOptions(
        derived_titles=bool(call.params.get("includeDerivedTitles")),
        last_message=bool(call.params.get("includeLastMessage")),
    )
    builder = RowBuilder(gateway.store, gateway.runs.has_active_run, gateway.row_cache)
    return {"session": await gateway.workers.run(builder.one, entry, options)}


def _text_of(message: JSONObject) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        return " ".join(part for part in parts if isinstance(part, str))
    return ""


def _branch(store: Store, session_id: str) -> JSONObject | None:
    """The one branch of a linear transcript: its newest message, the newest user text, how
    many messages it holds."""
    count = 0
    last: TranscriptEvent | None = None
    headline = ""
    after = 0
    while True:
        events = store.events(session_id, after_seq=after, limit=_PAGE)
        for event in events:
            if event.type != MESSAGE_EVENT:
                continue
            count += 1
            last = event
            message = message_json(event)
            if message.get("role") == "user":
                headline = " ".join(_text_of(message).split())[:HEADLINE_MAX_CHARS]
        if len(events) < _PAGE:
            break
        after = events[-1].seq
    if last is None:
        return None
    updated = datetime.fromtimestamp(last.ts / 1000, tz=UTC).isoformat().replace("+00:00", "Z")
    return {
        "leafEntryId": str(message_json(last)["id"]),
        "headline": headline,
        "messageCount": count,
        "updatedAt": updated,
        "active": True,
    }


@methods.method("sessions.branches.list", scope=READ, schema=BRANCHES)
async def sessions_branches_list(call: Call) -> JSON:
    key = _agent_checked(call, "sessionKey")
    gateway = call.gateway
    entry = await gateway.workers.run(gateway.catalog.get, key)
    if entry is None:
        return {"branches": []}
    branch = await gateway.workers.run(_branch, gateway.store, entry.session_id)
    return {"branches": [] if branch is None else [branch]}
