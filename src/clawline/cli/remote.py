"""``GatewaySessionsBackend``: the ``sessions`` commands through a running gateway.

Used when a gateway is configured (``CLAWLINE_GATEWAY_URL`` or ``[gateway] url``). Output and
errors are the same as with the store, because

- rows of ``sessions.list`` carry every entry field (``lineagePath`` included), so entries are
  rebuilt from them exactly (:func:`entry_from_row`); single sessions are found with
  ``sessions.list {search}``, trees with ``{rootSessionKey}``, pages with ``{cursor}``;
- keys are canonicalised here with the gateway's own defaults (``hello-ok.snapshot
  .sessionDefaults``), and changes are checked here with the catalog's own rules before they
  are sent, so a refused change reads exactly as it does locally and writes nothing;
- refusals are mapped back onto clawline's error types (:func:`local_error`), which decide
  the exit code.

Where the gateway protocol cannot do what the store can, the command refuses with a message
naming ``--local``: ``sessions patch`` of fields ``sessions.patch`` does not accept (``status``,
``parentSessionKey``, arbitrary ``--set`` fields). ``sessions show`` lists message events only
(``chat.history``; at most 1000). Differences that come from gateway policy:
``sessions.create`` refuses a parent that does not exist, and ``sessions.delete`` refuses an
agent's main session. An entry field named like a row-only field (``kind``, ``hasActiveRun``,
``childSessions``, …) cannot be told apart from it and is left out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from clawline import keys
from clawline.cli.backend import (
    Deletion,
    ListRequest,
    SessionDetail,
    SessionsPage,
    SessionTree,
    Write,
)
from clawline.client.blocking import BlockingGatewayClient
from clawline.client.client_errors import ClientError, GatewayRequestError
from clawline.client.target import GatewayTarget
from clawline.clock import Clock
from clawline.config import Settings
from clawline.errors import (
    ClawlineError,
    Conflict,
    InvalidField,
    InvalidInput,
    LabelInUse,
    NotFound,
    SessionNotFound,
)
from clawline.lineage.tree import TreeNode, build_forest
from clawline.records.session import CORE_FIELDS, SessionEntry
from clawline.records.transcript import TranscriptEvent
from clawline.sessions.catalog import MAX_LIST_LIMIT
from clawline.sessions.changes import apply_changes
from clawline.types import JSON, JSONObject

WALK_PAGE = 1000
"""Rows per ``sessions.list`` page when walking a whole tree or catalog."""
HISTORY_LIMIT = 1000
"""The most messages one ``chat.history`` call returns."""

ROW_ONLY_FIELDS = frozenset(
    {
        "kind",
        "agentId",
        "hasActiveRun",
        "lineage",
        "lineagePath",
        "childSessions",
        "derivedTitle",
        "lastMessagePreview",
    }
)
"""Row fields computed by the gateway, not stored in the entry."""

_CREATE_FIELDS = ("label", "parentSessionKey")
_EVERYTHING = {"includeGlobal": True, "includeUnknown": True}
"""Local listings include the ``global``/``unknown`` buckets; the gateway's do on request."""


def local_error(error: GatewayRequestError) -> ClawlineError:
    """The clawline error a gateway refusal stands for (it decides the CLI's exit code), read
    from its category and class (``details.errorType``, ``details.errorClass``): a missing
    session is :class:`SessionNotFound` (exit 1), a label in use :class:`LabelInUse` (exit 2),
    other invalid input :class:`InvalidInput` (exit 2). A refusal of access (``AccessRefused``:
    a missing scope, an unknown method) stays as it is (exit 1), and so does every other
    category."""
    details = error.details if isinstance(error.details, dict) else {}
    error_class = details.get("errorClass")
    if error.category is NotFound:
        return SessionNotFound(error.message)
    if error_class == "LabelInUse":
        return LabelInUse(error.message)
    if error.category is InvalidInput and error_class != "AccessRefused":
        return InvalidInput(error.message)
    return error


def _objects(payload: Mapping[str, JSON], name: str) -> list[Mapping[str, Any]]:
    """``payload[name]``, a list of objects (``[]`` when absent)."""
    items = payload.get(name)
    if items is None:
        return []
    if not isinstance(items, list) or not all(isinstance(item, Mapping) for item in items):
        raise ClientError(f"the gateway sent {name} that is not a list of objects")
    return items


def entry_from_row(row: Mapping[str, Any]) -> SessionEntry:
    """The entry a ``sessions.list`` row was built from."""
    try:
        extra = {
            name: value
            for name, value in row.items()
            if name not in CORE_FIELDS and name not in ROW_ONLY_FIELDS
        }
        return SessionEntry(
            key=row["key"],
            session_id=row["sessionId"],
            created_at=row["createdAt"],
            updated_at=row["updatedAt"],
            root_session_key=row["rootSessionKey"],
            trace_id=row["traceId"],
            lineage_path=tuple(row["lineagePath"]),
            label=row.get("label"),
            display_name=row.get("displayName"),
            status=row.get("status"),
            spawned_by=row.get("spawnedBy"),
            parent_session_key=row.get("parentSessionKey"),
            spawn_depth=row.get("spawnDepth"),
            subagent_role=row.get("subagentRole"),
            subagent_control_scope=row.get("subagentControlScope"),
            spawned_workspace_dir=row.get("spawnedWorkspaceDir"),
            spawned_cwd=row.get("spawnedCwd"),
            started_at=row.get("startedAt"),
            ended_at=row.get("endedAt"),
            plugin_extensions=row.get("pluginExtensions") or {},
            extra=extra,
        )
    except (KeyError, TypeError) as error:
        raise ClientError(f"the gateway sent a session row without {error}") from None


def _event_from_message(session_id: str, message: Mapping[str, Any]) -> TranscriptEvent:
    """A ``chat.history`` message as the transcript event it was made from: ``seq`` and
    ``timestamp`` are the event's, and an ``id`` of the default form was added by the gateway
    (``chat.history`` returns only ``message`` events)."""
    seq = message.get("seq")
    ts = message.get("timestamp")
    data = {name: value for name, value in message.items() if name not in ("seq", "timestamp")}
    if data.get("id") == f"{session_id}:{seq}":
        del data["id"]
    return TranscriptEvent(
        session_id=session_id,
        seq=seq if isinstance(seq, int) else 0,
        ts=ts if isinstance(ts, int) else 0,
        type="message",
        data=data,
    )


class GatewaySessionsBackend:
    """A :class:`~clawline.cli.backend.SessionsBackend` over gateway methods."""

    def __init__(
        self,
        client: BlockingGatewayClient,
        clock: Clock,
        *,
        default_agent_id: str,
        main_key: str,
        timeout: float = 60.0,
    ) -> None:
        self.client = client
        self.clock = clock
        self.default_agent_id = default_agent_id
        self.main_key = main_key
        self.timeout = timeout

    # --- plumbing ------------------------------------------------------------------------

    def _call(self, method: str, params: JSONObject) -> JSONObject:
        try:
            payload = self.client.request(method, params, timeout=self.timeout)
        except GatewayRequestError as error:
            raise local_error(error) from None
        if not isinstance(payload, dict):
            raise ClientError(f"{method}: the gateway sent an unexpected answer")
        return payload

    def canonical(self, raw: object) -> str:
        return keys.canonicalize(
            raw, default_agent_id=self.default_agent_id, main_key=self.main_key
        )

    def _rows(self, params: JSONObject) -> Iterator[Mapping[str, Any]]:
        """Every row of a listing, page by page."""
        cursor: str | None = None
        while True:
            page = dict(params, limit=WALK_PAGE, **_EVERYTHING)
            if cursor is not None:
                page["cursor"] = cursor
            payload = self._call("sessions.list", page)
            yield from _objects(payload, "sessions")
            next_cursor = payload.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor:
                return
            cursor = next_cursor

    def _find(self, key: str) -> Mapping[str, Any] | None:
        """The row of exactly ``key`` (a canonical key), if the session exists."""
        return next((row for row in self._rows({"search": key}) if row.get("key") == key), None)

    def _require(self, key: str) -> Mapping[str, Any]:
        row = self._find(key)
        if row is None:
            raise SessionNotFound(f"session not found: {key}")
        return row

    def _check(self, current: SessionEntry | None, key: str, changes: Mapping[str, object]) -> None:
        """The catalog's own validation, so a refusal reads as it does locally."""
        apply_changes(current, key, changes, now=self.clock.now_ms(), canonical=self.canonical)

    @staticmethod
    def _check_patchable(changes: Mapping[str, object], allowed: Sequence[str]) -> None:
        from clawline.gateway.methods.sessions.write import PATCH_FIELDS

        for name in changes:
            if name not in PATCH_FIELDS and name not in allowed:
                raise InvalidField(
                    f"{name} cannot be changed through the gateway (sessions.patch does not "
                    "accept it); use 'clawline --local' to write the store directly"
                )

    # --- reads ---------------------------------------------------------------------------

    def list_page(self, request: ListRequest) -> SessionsPage:
        """Like the local backend, ``--active`` is applied here so a cursor stays valid."""
        agent = None if request.agent_id is None else keys.normalize_agent_id(request.agent_id)
        since = None
        if request.active_minutes is not None:
            if request.active_minutes < 1:
                raise InvalidField("invalid --active (use a number of minutes >= 1)")
            since = self.clock.now_ms() - request.active_minutes * 60_000
        if not 0 < request.limit <= MAX_LIST_LIMIT:
            raise InvalidField(f"invalid limit (use an integer from 1 to {MAX_LIST_LIMIT})")
        params: JSONObject = {"limit": request.limit, **_EVERYTHING}
        if agent is not None:
            params["agentId"] = agent
        if request.cursor is not None:
            params["cursor"] = request.cursor
        payload = self._call("sessions.list", params)
        entries = [entry_from_row(row) for row in _objects(payload, "sessions")]
        next_cursor = payload.get("nextCursor")
        cursor = next_cursor if isinstance(next_cursor, str) and next_cursor else None
        if since is None:
            return SessionsPage(entries=entries, next_cursor=cursor)
        active = [entry for entry in entries if entry.updated_at >= since]
        ended = len(active) < len(entries)
        return SessionsPage(entries=active, next_cursor=None if ended else cursor)

    def lookup(self, keys: Sequence[str]) -> dict[str, SessionEntry]:
        found: dict[str, SessionEntry] = {}
        for key in dict.fromkeys(keys):
            row = self._find(key)
            if row is not None:
                found[key] = entry_from_row(row)
        return found

    def _events(self, entry: SessionEntry, limit: int) -> list[TranscriptEvent]:
        limit = min(limit, HISTORY_LIMIT)
        payload = self._call("chat.history", {"sessionKey": entry.key, "limit": limit})
        session_id = payload.get("sessionId")
        sid = session_id if isinstance(session_id, str) else entry.session_id
        return [_event_from_message(sid, m) for m in _objects(payload, "messages")][-limit:]

    def detail(self, key: str, *, events: int) -> SessionDetail:
        canonical = self.canonical(key)
        row = self._require(canonical)
        entry = entry_from_row(row)
        children = [str(child) for child in row.get("childSessions") or []]
        tail = self._events(entry, events) if events > 0 else []
        return SessionDetail(entry=entry, children=children, events=tail)

    def tree(self, key: str) -> SessionTree:
        canonical = self.canonical(key)
        entry = entry_from_row(self._require(canonical))
        root_key = entry.root_session_key
        members = [entry_from_row(row) for row in self._rows({"rootSessionKey": root_key})]
        forest = build_forest(members, placeholders=True)
        root = next((node for node in forest if node.key == root_key), None)
        if root is None:
            raise SessionNotFound(f"session not found: {canonical}")
        return SessionTree(root=root, key=canonical)

    def forest(self) -> list[TreeNode]:
        return build_forest((entry_from_row(row) for row in self._rows({})), placeholders=True)

    # --- writes --------------------------------------------------------------------------

    def create(self, key: str, changes: Mapping[str, object]) -> Write:
        """``sessions.create`` (key, label, parent), then ``sessions.patch`` for the other
        fields; if that second step fails, the new session is deleted again."""
        canonical = self.canonical(key)
        if self._find(canonical) is not None:
            raise Conflict(f"session already exists: {canonical} (use 'sessions patch')")
        self._check(None, canonical, changes)
        self._check_patchable(changes, _CREATE_FIELDS)
        first: JSONObject = {"key": canonical}
        rest: JSONObject = {}
        for name, value in changes.items():
            if name in _CREATE_FIELDS and value is not None:
                first[name] = value  # type: ignore[assignment]
            else:
                rest[name] = value  # type: ignore[assignment]
        self._call("sessions.create", first)
        if rest:
            try:
                self._call("sessions.patch", {"key": canonical, **rest})
            except ClawlineError:
                self._undo_create(canonical)
                raise
        return Write(entry=entry_from_row(self._require(canonical)), changed=True)

    def _undo_create(self, key: str) -> None:
        with contextlib.suppress(ClawlineError):
            self._call("sessions.delete", {"key": key})

    def patch(self, key: str, changes: Mapping[str, object]) -> Write:
        canonical = self.canonical(key)
        before = entry_from_row(self._require(canonical))
        self._check(before, canonical, changes)
        self._check_patchable(changes, ())
        params: JSONObject = {"key": canonical}
        params.update(changes)  # type: ignore[arg-type]
        self._call("sessions.patch", params)
        after = entry_from_row(self._require(canonical))
        return Write(entry=after, changed=after != before)

    def delete(self, key: str) -> Deletion:
        canonical = self.canonical(key)
        row = self._require(canonical)
        children = [str(child) for child in row.get("childSessions") or []]
        result = self._call("sessions.delete", {"key": canonical})
        if result.get("deleted") is False:
            raise SessionNotFound(f"session not found: {canonical}")
        return Deletion(entry=entry_from_row(row), children_left=children)

    def close(self) -> None:
        self.client.close()


def _default(defaults: Mapping[str, JSON], name: str, fallback: str) -> str:
    value = defaults.get(name)
    return value if isinstance(value, str) and value else fallback


def open_gateway_backend(
    target: GatewayTarget, settings: Settings, clock: Clock
) -> GatewaySessionsBackend:
    """Connect to ``target`` (with this state directory's device identity)."""
    from clawline.client.identity import load_or_create_identity

    device = load_or_create_identity(settings.state_dir)
    client = BlockingGatewayClient.connect(target.url, token=target.token, device=device)
    defaults = client.client.session_defaults
    return GatewaySessionsBackend(
        client,
        clock,
        default_agent_id=_default(defaults, "defaultAgentId", settings.default_agent_id),
        main_key=_default(defaults, "mainKey", settings.main_key),
    )
