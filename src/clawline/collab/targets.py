"""Which session a session tool means: a key, a sessionId, or a label.

- A value shaped like a key (``main``, ``agent:…``, ``cron:…``, ``hook:…``, ``node-…``,
  ``…:group:…``, an ACP key) is canonicalised and used as it is, existing or not.
- Anything else, and any UUID, is first tried as a key that exists, then as a ``sessionId``;
  when neither matches the answer is ``Session not found: <value> (use the full sessionKey
  from sessions_list)``.
- A label is looked up with ``sessions.resolve``'s rules: exact label, optionally within one
  agent; none → ``No session found with label: <label>``.

Tools show keys in display form: the default agent's main session is ``main``.

Everything here reads the store and is blocking: run it on a store worker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clawline import keys
from clawline.errors import ClawlineError, NotFound
from clawline.records.session import SessionEntry
from clawline.sessions.catalog import SessionCatalog

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


class TargetError(NotFound):
    """The named session cannot be found; ``status`` is the tool result's status."""

    def __init__(self, message: str, status: str = "error") -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Target:
    key: str
    """Canonical."""
    display: str
    entry: SessionEntry | None
    """``None`` when a key-shaped value names a session that does not exist yet."""


def display_key(catalog: SessionCatalog, key: str) -> str:
    return "main" if key == catalog.main_session_key else key


def looks_like_session_id(value: str) -> bool:
    return _UUID.fullmatch(value.strip()) is not None


def looks_like_session_key(value: str) -> bool:
    raw = value.strip()
    if raw in ("main", "global", "unknown"):
        return True
    if keys.is_acp_key(raw) or raw.startswith(("agent:", "cron:", "hook:", "node-", "node:")):
        return True
    return ":group:" in raw or ":channel:" in raw


def _not_found(value: str) -> TargetError:
    return TargetError(f"Session not found: {value} (use the full sessionKey from sessions_list)")


def resolve_reference(catalog: SessionCatalog, value: str) -> Target:
    """Resolve a ``sessionKey`` argument (a key or a sessionId); raises :class:`TargetError`."""
    raw = value.strip()
    store = catalog.store
    if looks_like_session_id(raw) or not looks_like_session_key(raw):
        try:
            key: str | None = catalog.canonical(raw)
        except ClawlineError:
            key = None
        entry = None if key is None else store.get(key)
        if entry is not None:
            return Target(entry.key, display_key(catalog, entry.key), entry)
        found = store.by_session_id(raw)
        if not found:
            raise _not_found(raw)
        if len(found) > 1:
            listed = ", ".join(entry.key for entry in found)
            raise TargetError(f"Multiple sessions found for sessionId: {raw} ({listed})")
        return Target(found[0].key, display_key(catalog, found[0].key), found[0])
    try:
        key = catalog.canonical(raw)
    except ClawlineError as error:
        raise TargetError(str(error)) from None
    return Target(key, display_key(catalog, key), store.get(key))


def resolve_label(catalog: SessionCatalog, label: str, agent_id: str | None) -> Target:
    """The one session carrying ``label`` (within ``agent_id`` when given)."""
    found = catalog.by_label(label, agent_id)
    if not found:
        raise TargetError(f"No session found with label: {label}")
    if len(found) > 1:
        listed = ", ".join(entry.key for entry in found)
        raise TargetError(f"Multiple sessions found with label: {label} ({listed})")
    entry = found[0]
    return Target(entry.key, display_key(catalog, entry.key), entry)
