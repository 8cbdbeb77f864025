"""The row ``sessions_list`` shows a model (docs/collaboration.md), built from a listing row.

``{key, agentId, kind, channel, origin?{provider, accountId}, spawnedBy?, label?, displayName?,
parentSessionKey?, deliveryContext?, updatedAt, sessionId, model?, contextTokens?,
totalTokens?, estimatedCostUsd?, status?, startedAt?, endedAt?, runtimeMs?, childSessions,
thinkingLevel?, fastMode?, verboseLevel?, reasoningLevel?, elevatedLevel?, responseUsage?,
systemSent?, abortedLastRun?, sendPolicy?, lastChannel?, lastTo?, lastAccountId?, messages?}``

Keys are in display form (the default agent's main session is ``main``); absent values are
left out. ``channel`` is ``internal`` for cron, hook and node sessions, else the entry's
channel (or its origin's provider), else the last delivery channel, else ``unknown``. clawline
keeps transcripts in its store, not in files, so rows carry no ``transcriptPath``.
"""

from __future__ import annotations

from collections.abc import Mapping

from clawline import keys
from clawline.collab.targets import display_key
from clawline.sessions.catalog import SessionCatalog
from clawline.types import JSON, JSONObject

RUN_STATUSES = frozenset({"running", "done", "failed", "killed", "timeout"})

_STRINGS = (
    "label",
    "displayName",
    "sessionId",
    "model",
    "thinkingLevel",
    "verboseLevel",
    "reasoningLevel",
    "elevatedLevel",
    "responseUsage",
    "sendPolicy",
)
_NUMBERS = (
    "updatedAt",
    "contextTokens",
    "totalTokens",
    "estimatedCostUsd",
    "startedAt",
    "endedAt",
    "runtimeMs",
)
_FLAGS = ("fastMode", "systemSent", "abortedLastRun")


def _text(value: JSON) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _channel(kind: str, row: Mapping[str, JSON], origin: str | None, last: str | None) -> str:
    if kind in ("cron", "hook", "node"):
        return "internal"
    return (_text(row.get("channel")) or origin or last or "unknown").lower()


def tool_row(catalog: SessionCatalog, row: Mapping[str, JSON]) -> JSONObject:
    """Shape one listing row (:mod:`clawline.sessions.listing_rows`) for ``sessions_list``."""
    key = str(row["key"])
    kind = keys.tool_kind(key, catalog.main_key)
    origin = row.get("origin") if isinstance(row.get("origin"), Mapping) else None
    delivery = row.get("deliveryContext")
    delivery = delivery if isinstance(delivery, Mapping) else None
    origin_provider = _text(origin.get("provider")) if isinstance(origin, Mapping) else None
    origin_account = _text(origin.get("accountId")) if isinstance(origin, Mapping) else None
    last_channel = _text(delivery.get("channel")) if delivery else None
    last_channel = last_channel or _text(row.get("lastChannel"))
    out: JSONObject = {
        "key": display_key(catalog, key),
        "agentId": keys.agent_id_of(key),
        "kind": kind,
        "channel": _channel(kind, row, origin_provider, last_channel),
    }
    if origin_provider or origin_account:
        out["origin"] = {"provider": origin_provider, "accountId": origin_account}
    for name in ("spawnedBy", "parentSessionKey"):
        value = _text(row.get(name))
        if value is not None:
            out[name] = display_key(catalog, value)
    for name in _STRINGS:
        value = _text(row.get(name))
        if value is not None:
            out[name] = value
    for name in _NUMBERS:
        number = row.get(name)
        if isinstance(number, int | float) and not isinstance(number, bool):
            out[name] = number
    for name in _FLAGS:
        flag = row.get(name)
        if isinstance(flag, bool):
            out[name] = flag
    if delivery:
        out["deliveryContext"] = {
            name: delivery[name]
            for name in ("channel", "to", "accountId", "threadId")
            if delivery.get(name) is not None
        }
    status = row.get("status")
    if isinstance(status, str) and status in RUN_STATUSES:
        out["status"] = status
    children = row.get("childSessions")
    out["childSessions"] = (
        [display_key(catalog, child) for child in children or () if isinstance(child, str)]
        if isinstance(children, list)
        else []
    )
    last_to = (_text(delivery.get("to")) if delivery else None) or _text(row.get("lastTo"))
    last_account = (_text(delivery.get("accountId")) if delivery else None) or _text(
        row.get("lastAccountId")
    )
    for name, value in (
        ("lastChannel", last_channel),
        ("lastTo", last_to),
        ("lastAccountId", last_account),
    ):
        if value is not None:
            out[name] = value
    return out
