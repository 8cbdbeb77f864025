"""The ACP agent ``clawline acp`` serves: ACP sessions mapped onto gateway sessions and chat.

Each handler gets the request validated by the SDK's pydantic model and its ``_meta`` as a
separate dict (the SDK's own router flattens ``_meta`` into keyword arguments, where a key like
``cwd`` would overwrite a real parameter), and answers plain JSON. The class deliberately does
not inherit ``acp.Agent``: :mod:`clawline.acp.stdio_server` routes only the methods below, so
every other method is ``-32601 Method not found`` (inheriting ``acp.Agent`` would answer ``{}``).

- ``session/new``: key resolution (:mod:`clawline.acp.session_table`), ``sessions.reset`` if
  asked;
- ``session/load``: ``sessions.get`` (unknown → ``-32002``), then ``chat.history`` replayed
  (:mod:`clawline.acp.replay`) before the answer;
- ``session/resume``: ``sessions.get``, no replay;
- ``session/prompt``: ``chat.send {idempotencyKey: runId}``, then the run's events
  (:mod:`clawline.acp.run_updates`);
- ``session/cancel``, ``session/close``: ``chat.abort {sessionKey, runId}``;
- ``session/list``: ``sessions.list`` keyset pages (:mod:`clawline.acp.listing`).

After a load, a resume and every prompt the client gets a ``session_info_update`` with the
session's title, ``updatedAt`` and lineage ``_meta`` (:mod:`clawline.acp.meta`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from acp import RequestError
from acp.connection import Connection
from acp.schema import (
    CancelNotification,
    CloseSessionRequest,
    InitializeRequest,
    ListSessionsRequest,
    LoadSessionRequest,
    NewSessionRequest,
    PromptRequest,
    ResumeSessionRequest,
)

from clawline import __version__
from clawline.acp.listing import SessionLister
from clawline.acp.meta import iso_time, lineage_meta, row_title
from clawline.acp.prompt import prompt_input
from clawline.acp.replay import HISTORY_LIMIT, HISTORY_MAX_CHARS, replay_updates
from clawline.acp.rpc_errors import internal_error, invalid_params, session_not_found
from clawline.acp.run_updates import TurnStream
from clawline.acp.session_table import (
    BridgeSession,
    SessionDefaults,
    SessionRequest,
    SessionTable,
    resolve_key,
)
from clawline.acp.strict import require_absolute_cwd
from clawline.acp.upstream import Upstream

log = logging.getLogger("clawline.acp")

PROTOCOL_VERSION = 1
AGENT_INFO = {"name": "clawline-acp", "title": "clawline ACP Gateway", "version": __version__}
CAPABILITIES = {
    "loadSession": True,
    "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
    "mcpCapabilities": {"http": False, "sse": False},
    "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
}
NO_MCP = "clawline acp does not support MCP servers (send mcpServers: [])"


@dataclass(slots=True)
class Turn:
    """One ``session/prompt`` in flight: its gateway run and whether it was cancelled."""

    run_id: str
    key: str
    started: bool = False
    cancelled: bool = False


class Bridge:
    def __init__(self, upstream: Upstream, defaults: SessionDefaults, cwd: str) -> None:
        self.upstream = upstream
        self.defaults = defaults
        self.cwd = cwd
        self.sessions = SessionTable()
        self.lister = SessionLister(upstream, cwd)
        self._connection: Connection | None = None

    def attach(self, connection: Connection) -> None:
        self._connection = connection

    async def notify(self, session_id: str, update: dict[str, Any]) -> None:
        assert self._connection is not None
        params = {"sessionId": session_id, "update": update}
        await self._connection.send_notification("session/update", params)

    # --- initialize -----------------------------------------------------------------------

    async def initialize(self, request: InitializeRequest, meta: dict[str, Any]) -> Any:
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": CAPABILITIES,
            "agentInfo": AGENT_INFO,
            "authMethods": [],
        }

    # --- sessions -------------------------------------------------------------------------

    async def new_session(self, request: NewSessionRequest, meta: dict[str, Any]) -> Any:
        require_absolute_cwd("session/new", request.cwd)
        _refuse_mcp(request.mcp_servers)
        wanted = SessionRequest.from_meta(meta)
        key = await resolve_key(self.upstream, wanted, self.defaults, None)
        if wanted.reset if wanted.reset is not None else self.defaults.reset:
            await self._reset(key, missing_ok=True)
        prefix = wanted.prefix_cwd if wanted.prefix_cwd is not None else self.defaults.prefix_cwd
        self.sessions.put(BridgeSession(key, key, request.cwd, prefix))
        return {"sessionId": key, "_meta": {"sessionKey": key}}

    async def _open(self, session_id: str, cwd: str, meta: dict[str, Any]) -> BridgeSession:
        wanted = SessionRequest.from_meta(meta)
        key = await resolve_key(self.upstream, wanted, None, session_id)
        if not await self._row(key):
            raise session_not_found(session_id)
        if wanted.reset:
            await self._reset(key, missing_ok=False)
        prefix = wanted.prefix_cwd if wanted.prefix_cwd is not None else self.defaults.prefix_cwd
        return BridgeSession(session_id, key, cwd, prefix)

    async def load_session(self, request: LoadSessionRequest, meta: dict[str, Any]) -> Any:
        require_absolute_cwd("session/load", request.cwd)
        _refuse_mcp(request.mcp_servers)
        session = await self._open(request.session_id, request.cwd, meta)
        history = await self.upstream.request(
            "chat.history",
            {"sessionKey": session.key, "limit": HISTORY_LIMIT, "maxChars": HISTORY_MAX_CHARS},
        )
        for update in replay_updates(history.get("messages") or []):
            await self.notify(session.session_id, update)
        self.sessions.put(session)
        await self._info_update(session)
        return {}

    async def resume_session(self, request: ResumeSessionRequest, meta: dict[str, Any]) -> Any:
        require_absolute_cwd("session/resume", request.cwd)
        _refuse_mcp(request.mcp_servers or [])
        session = await self._open(request.session_id, request.cwd, meta)
        self.sessions.put(session)
        await self._info_update(session)
        return {}

    async def close_session(self, request: CloseSessionRequest, meta: dict[str, Any]) -> Any:
        session = self.sessions.pop(request.session_id)
        if session.turn is not None:
            await self._cancel_turn(session.turn)
        return {}

    async def list_sessions(self, request: ListSessionsRequest, meta: dict[str, Any]) -> Any:
        return await self.lister.list(cwd=request.cwd, cursor=request.cursor, meta=meta)

    async def _row(self, key: str) -> dict[str, Any] | None:
        result = await self.upstream.request_or_none("sessions.get", {"key": key})
        if result is None:
            return None
        row = result.get("session")
        return row if isinstance(row, dict) else None

    async def _reset(self, key: str, *, missing_ok: bool) -> None:
        if missing_ok:
            await self.upstream.request_or_none("sessions.reset", {"key": key})
        else:
            await self.upstream.request("sessions.reset", {"key": key})

    async def _info_update(self, session: BridgeSession) -> None:
        """``session_info_update`` with the row's title, ``updatedAt`` and lineage ``_meta``
        (nothing when the gateway has no row yet)."""
        try:
            row = await self._row(session.key)
        except RequestError as error:
            log.warning("no session_info_update for %s: %s", session.key, error)
            return
        if row is None:
            return
        update: dict[str, Any] = {"sessionUpdate": "session_info_update", "title": row_title(row)}
        if (updated := iso_time(row.get("updatedAt"))) is not None:
            update["updatedAt"] = updated
        update["_meta"] = lineage_meta(row)
        await self.notify(session.session_id, update)

    # --- prompt turns ---------------------------------------------------------------------

    async def prompt(self, request: PromptRequest, meta: dict[str, Any]) -> Any:
        session = self.sessions.get(request.session_id)
        prefix = meta.get("prefixCwd")
        prefix_cwd = prefix if isinstance(prefix, bool) else session.prefix_cwd
        given = prompt_input(request.prompt, session.cwd, prefix_cwd=prefix_cwd)
        if session.turn is not None:  # a new prompt replaces the one in flight
            await self._cancel_turn(session.turn)
        turn = Turn(str(uuid.uuid4()), session.key)
        session.turn = turn
        stream = TurnStream(lambda update: self.notify(session.session_id, update))
        stop_watching = self.upstream.watch(turn.run_id, stream.push)
        try:
            stop_reason = await self._run(turn, stream, given.message, given.attachments)
        except (RequestError, ConnectionError) as error:
            if turn.cancelled:
                return {"stopReason": "cancelled"}
            if isinstance(error, RequestError):
                raise
            raise internal_error(str(error)) from None
        finally:
            stop_watching()
            if session.turn is turn:
                session.turn = None
        await self._info_update(session)
        return {"stopReason": "cancelled" if turn.cancelled else stop_reason}

    async def _run(
        self, turn: Turn, stream: TurnStream, message: str, attachments: list[dict[str, Any]]
    ) -> str:
        params: dict[str, Any] = {
            "sessionKey": turn.key,
            "message": message,
            "idempotencyKey": turn.run_id,
        }
        if attachments:
            params["attachments"] = attachments
        ack = await self.upstream.request("chat.send", params)
        turn.started = True
        if turn.cancelled:
            await self._abort(turn)
        if isinstance(ack, dict) and ack.get("status") not in ("started", "in_flight"):
            return "end_turn"  # an idempotent replay of a run that already ended
        return await stream.follow()

    async def cancel(self, request: CancelNotification, meta: dict[str, Any]) -> None:
        session = self.sessions.find(request.session_id)
        if session is None or session.turn is None:
            log.info("session/cancel: nothing to cancel in %s", request.session_id)
            return
        await self._cancel_turn(session.turn)

    async def _cancel_turn(self, turn: Turn) -> None:
        if turn.cancelled:
            return
        turn.cancelled = True
        if turn.started:  # else _run aborts as soon as chat.send has answered
            await self._abort(turn)

    async def _abort(self, turn: Turn) -> None:
        try:
            await self.upstream.request(
                "chat.abort", {"sessionKey": turn.key, "runId": turn.run_id}
            )
        except RequestError as error:
            log.warning("chat.abort of run %s failed: %s", turn.run_id, error)

    async def aclose(self) -> None:
        """Cancel the turns still in flight (their runs are aborted in the gateway)."""
        self.lister.close()
        turns = [s.turn for s in self.sessions.active()]
        await asyncio.gather(*(self._cancel_turn(t) for t in turns), return_exceptions=True)


def _refuse_mcp(servers: Sequence[object]) -> None:
    if servers:
        raise invalid_params(NO_MCP)
