"""``sessions.resolve`` (a key from a key, a session id or a label) and ``sessions.preview``
(the last messages of up to 64 sessions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clawline import keys
from clawline.agents.chat_history import read_messages
from clawline.errors import ClawlineError, SessionNotFound
from clawline.gateway.frames import GatewayError
from clawline.gateway.methods.sessions.common import required_key
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
from clawline.records.session import SessionEntry
from clawline.sessions.catalog import SessionCatalog
from clawline.sessions.labels import normalize_label
from clawline.sessions.listing_rows import RowBuilder, RowOptions, event_text
from clawline.types import JSON, JSONObject

methods = MethodRegistry()

_KEY = P.string(max_len=keys.MAX_KEY_LENGTH)

# --- sessions.resolve ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Scope:
    """Which sessions a ``sessions.resolve`` may find."""

    agent_id: str | None
    spawned_by: str | None
    include_global: bool
    include_unknown: bool

    def admits(self, entry: SessionEntry, *, by_key: bool) -> bool:
        literal = entry.key in ("global", "unknown")
        if self.agent_id is not None and (literal or entry.agent_id != self.agent_id):
            return False
        if self.spawned_by is not None and self.spawned_by not in entry.lineage_path[:-1]:
            return False
        if literal and not by_key:
            return self.include_global if entry.key == "global" else self.include_unknown
        return True


def _selector(params: dict[str, Any], name: str) -> str | None:
    value = params.get(name)
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()


def _resolve(catalog: SessionCatalog, scope: _Scope, selector: str, value: str) -> str:
    """Blocking: runs on the store thread."""
    if selector == "key":
        key = catalog.canonical(value)
        entry = catalog.store.get(key)
        if entry is None or not scope.admits(entry, by_key=True):
            raise SessionNotFound(f"No session found: {value}")
        return entry.key
    if selector == "sessionId":
        found = [e for e in catalog.store.by_session_id(value) if scope.admits(e, by_key=False)]
        if not found:
            raise SessionNotFound(f"No session found: {value}")
        if len(found) > 1:
            listed = ", ".join(entry.key for entry in found)
            raise GatewayError(f"Multiple sessions found for sessionId: {value} ({listed})")
        return found[0].key
    label = normalize_label(value)
    found = [e for e in catalog.by_label(label, scope.agent_id) if scope.admits(e, by_key=False)]
    if not found:
        raise SessionNotFound(f"No session found with label: {label}")
    if len(found) > 1:
        listed = ", ".join(entry.key for entry in found)
        raise GatewayError(f"Multiple sessions found with label: {label} ({listed})")
    return found[0].key


@methods.method(
    "sessions.resolve",
    scope=READ,
    schema={
        "key": _KEY,
        "sessionId": P.string(max_len=256),
        "label": P.string(max_len=1024),
        "agentId": P.string(max_len=128),
        "spawnedBy": _KEY,
        "includeGlobal": P.boolean(),
        "includeUnknown": P.boolean(),
        "reference": P.object(),
        "allowMissing": P.boolean(),
    },
)
async def sessions_resolve(call: Call) -> JSON:
    """``{ok, key}``. OpenClaw's Control UI names a session by ``reference: {key, slug?}``
    (resolved as ``key``) and sends ``allowMissing`` (an unknown session then answers
    ``{ok:true, missing:true}`` instead of the error)."""
    params = dict(call.params)
    reference = params.pop("reference", None)
    if reference is not None:
        ref_key = reference.get("key") if isinstance(reference, dict) else None
        if not isinstance(ref_key, str) or not ref_key.strip():
            raise GatewayError("invalid sessions.resolve params: reference.key must be a string")
        if _selector(params, "key") is not None:
            raise GatewayError("Provide either key, sessionId, or label (not multiple)")
        params["key"] = ref_key
    try:
        return await _resolve_params(call, params)
    except SessionNotFound:
        if params.get("allowMissing"):
            return {"ok": True, "missing": True}
        raise


async def _resolve_params(call: Call, params: dict[str, Any]) -> JSON:
    chosen = [(name, v) for name in ("key", "sessionId", "label") if (v := _selector(params, name))]
    if len(chosen) > 1:
        raise GatewayError("Provide either key, sessionId, or label (not multiple)")
    if not chosen:
        raise GatewayError("Either key, sessionId, or label is required")
    catalog = call.gateway.catalog
    agent = _selector(params, "agentId")
    spawned_by = _selector(params, "spawnedBy")
    scope = _Scope(
        agent_id=None if agent is None else keys.normalize_agent_id(agent),
        spawned_by=None if spawned_by is None else catalog.canonical(spawned_by),
        include_global=bool(params.get("includeGlobal")),
        include_unknown=bool(params.get("includeUnknown")),
    )
    selector, value = chosen[0]
    key = await call.gateway.workers.run(_resolve, catalog, scope, selector, value)
    return {"ok": True, "key": key}


# --- sessions.preview ------------------------------------------------------------------------

PREVIEW_MAX_KEYS = 64
PREVIEW_LIMIT = 12
PREVIEW_MAX_LIMIT = 200
PREVIEW_CHARS = 240
PREVIEW_MIN_CHARS = 20
PREVIEW_MAX_CHARS = 100_000
_ROLES = frozenset({"user", "assistant", "tool", "system"})
_TOOL_ROLES = frozenset({"toolResult", "tool_result", "toolresult"})


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _role(value: object) -> str:
    if isinstance(value, str):
        if value in _ROLES:
            return value
        if value in _TOOL_ROLES:
            return "tool"
    return "other"


def _previews(
    catalog: SessionCatalog, requested: Sequence[str], limit: int, max_chars: int
) -> list[JSONObject]:
    """Blocking: one batched read of the entries, then the tail of each transcript (the
    store reads tails one transcript at a time)."""
    canonical: dict[str, str | None] = {}
    for raw in requested:
        try:
            canonical[raw] = catalog.canonical(raw) if raw.strip() else None  # blank: no key
        except ClawlineError:
            canonical[raw] = None
    store = catalog.store
    entries = store.get_many([key for key in canonical.values() if key is not None])
    previews: list[JSONObject] = []
    for raw in requested:
        key = canonical[raw]
        entry = None if key is None else entries.get(key)
        if key is None or entry is None:
            status = "error" if key is None else "missing"
            previews.append({"key": raw, "status": status, "items": []})
            continue
        items: list[JSONObject] = [
            {"role": _role(event.data.get("role")), "text": _clip(event_text(event), max_chars)}
            for event in read_messages(store, entry.session_id, limit)
        ]
        previews.append({"key": raw, "status": "ok" if items else "empty", "items": list(items)})
    return previews


@methods.method(
    "sessions.preview",
    scope=READ,
    schema={
        "keys": P.array(_KEY, required=True, max_len=PREVIEW_MAX_KEYS),
        "limit": P.integer(min=1, max=PREVIEW_MAX_LIMIT),
        "maxChars": P.integer(min=PREVIEW_MIN_CHARS, max=PREVIEW_MAX_CHARS),
    },
)
async def sessions_preview(call: Call) -> JSON:
    requested: list[str] = call.params["keys"]
    if not requested:
        raise GatewayError("invalid sessions.preview params: keys must have at least 1 item")
    limit = call.params.get("limit", PREVIEW_LIMIT)
    max_chars = call.params.get("maxChars", PREVIEW_CHARS)
    gateway = call.gateway
    unique = list(dict.fromkeys(requested))
    previews = await gateway.workers.run(_previews, gateway.catalog, unique, limit, max_chars)
    return {"ts": gateway.clock.now_ms(), "previews": previews}


# --- sessions.get ----------------------------------------------------------------------------


@methods.method("sessions.get", scope=READ, schema={"key": P.string(required=True, min_len=1)})
async def sessions_get(call: Call) -> JSON:
    """One session: ``{key, entry, session}`` where ``session`` is its listing row (with
    derived title and last-message preview). Unknown key → ``No session found: <key>``."""
    gateway = call.gateway
    requested = call.params["key"]
    key = required_key(call)

    def read() -> JSONObject:
        entry = gateway.store.get(key)
        if entry is None:
            raise SessionNotFound(f"No session found: {requested}")
        rows = RowBuilder(gateway.store, gateway.runs.has_active_run)
        row = rows.one(entry, RowOptions(derived_titles=True, last_message=True))
        return {"key": key, "entry": entry.to_json(), "session": row}

    return await gateway.workers.run(read)
