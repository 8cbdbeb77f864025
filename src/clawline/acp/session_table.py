"""The bridge's sessions: ACP ``sessionId`` ↔ gateway key, and how a key is chosen.

``_meta`` keys read on ``session/new``, ``session/load`` and ``session/resume`` (OpenClaw's
``openclaw acp``): ``sessionKey|session|key``, ``sessionLabel|label``,
``resetSession|reset``, ``requireExistingSession|requireExisting``, ``prefixCwd``.

Which gateway session (first that applies):

1. ``_meta`` label → ``sessions.resolve {label}`` (``Unable to resolve session label: <l>``);
2. ``_meta`` key → that key; with ``requireExisting`` it must exist (``sessions.resolve
   {key}``; ``Session key not found: <k>``);
3. ``session/new`` only: the command's ``--session-label`` / ``--session`` the same way;
4. ``session/new``: a fresh key ``acp-bridge:<uuid>`` (stored as
   ``agent:<default agent>:acp-bridge:<uuid>``); ``session/load``/``resume``: the
   ``sessionId`` itself, which is a gateway key (``session/list`` answers keys).

``session/new`` answers the canonical gateway key as its ``sessionId`` (OpenClaw answers a UUID
of its own): one id space for new, list, load and resume, and an id that survives a restart of
the bridge.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from acp import RequestError

from clawline.acp.rpc_errors import invalid_params, not_found, session_not_found
from clawline.errors import InvalidSessionKey

if TYPE_CHECKING:
    from clawline.acp.upstream import Upstream

FALLBACK_PREFIX = "acp-bridge"
MAX_SESSIONS = 5000


@dataclass(frozen=True, slots=True)
class SessionDefaults:
    """The command's options (``--session``, ``--session-label``, …)."""

    key: str | None = None
    label: str | None = None
    require_existing: bool = False
    reset: bool = False
    prefix_cwd: bool = True


def _first(meta: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if meta.get(name) is not None:
            return meta[name]
    return None


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _flag(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class SessionRequest:
    """What a request's ``_meta`` asks for."""

    key: str | None = None
    label: str | None = None
    reset: bool | None = None
    require_existing: bool | None = None
    prefix_cwd: bool | None = None

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> SessionRequest:
        return cls(
            key=_text(_first(meta, "sessionKey", "session", "key")),
            label=_text(_first(meta, "sessionLabel", "label")),
            reset=_flag(_first(meta, "resetSession", "reset")),
            require_existing=_flag(_first(meta, "requireExistingSession", "requireExisting")),
            prefix_cwd=_flag(meta.get("prefixCwd")),
        )


async def _by_label(upstream: Upstream, label: str) -> str:
    try:
        result = await upstream.request("sessions.resolve", {"label": label})
    except RequestError:
        raise not_found(f"Unable to resolve session label: {label}") from None
    return str(result["key"])


async def _by_key(upstream: Upstream, key: str, require_existing: bool) -> str:
    if require_existing:
        try:
            result = await upstream.request("sessions.resolve", {"key": key})
        except RequestError:
            raise not_found(f"Session key not found: {key}") from None
        return str(result["key"])
    try:
        return upstream.canonical(key)
    except InvalidSessionKey as error:
        raise invalid_params(str(error)) from None


async def resolve_key(
    upstream: Upstream,
    request: SessionRequest,
    defaults: SessionDefaults | None,
    fallback: str | None,
) -> str:
    """The canonical gateway key for a request. ``defaults`` only for ``session/new``;
    ``fallback`` = the ``sessionId`` of a load or resume (``None``: a fresh key)."""
    require = request.require_existing
    if require is None:
        require = defaults.require_existing if defaults is not None else False
    if request.label is not None:
        return await _by_label(upstream, request.label)
    if request.key is not None:
        return await _by_key(upstream, request.key, require)
    if defaults is not None and defaults.label is not None:
        return await _by_label(upstream, defaults.label)
    if defaults is not None and defaults.key is not None:
        return await _by_key(upstream, defaults.key, require)
    if fallback is not None:
        try:
            return upstream.canonical(fallback)
        except InvalidSessionKey:
            raise session_not_found(fallback) from None
    return upstream.canonical(f"{FALLBACK_PREFIX}:{uuid.uuid4()}")


@dataclass(slots=True)
class BridgeSession:
    session_id: str
    key: str
    cwd: str
    prefix_cwd: bool = True
    turn: Any = field(default=None, repr=False)
    """The prompt turn in progress (a :class:`clawline.acp.bridge_agent.Turn`), if any."""


class SessionTable:
    """ACP sessions of this bridge process, most recently used last; at most
    :data:`MAX_SESSIONS` (the least recently used idle one is forgotten first)."""

    def __init__(self, capacity: int = MAX_SESSIONS) -> None:
        self._capacity = capacity
        self._sessions: OrderedDict[str, BridgeSession] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def put(self, session: BridgeSession) -> None:
        previous = self._sessions.pop(session.session_id, None)
        if previous is not None and previous.turn is not None:
            session.turn = previous.turn
        self._sessions[session.session_id] = session
        while len(self._sessions) > self._capacity:
            idle = next((s for s in self._sessions.values() if s.turn is None), None)
            if idle is None:
                break
            del self._sessions[idle.session_id]

    def get(self, session_id: str) -> BridgeSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise session_not_found(session_id)
        self._sessions.move_to_end(session_id)
        return session

    def active(self) -> list[BridgeSession]:
        """Sessions with a prompt turn in flight."""
        return [session for session in self._sessions.values() if session.turn is not None]

    def find(self, session_id: str) -> BridgeSession | None:
        return self._sessions.get(session_id)

    def pop(self, session_id: str) -> BridgeSession:
        session = self._sessions.pop(session_id, None)
        if session is None:
            raise session_not_found(session_id)
        return session
