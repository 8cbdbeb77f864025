"""The ``subagents`` tool: list, kill or steer the children a session controls
(OpenClaw's tool).

Arguments ``{action?: "list"|"kill"|"steer" (default list), target?, message?,
recentMinutes? >= 1 (default 30)}``. A session whose ``subagentControlScope`` is ``none`` (a
leaf) controls nothing.

- ``list``: ``{status:"ok", action, requesterSessionKey, total, active:[child], recent:[child],
  text}`` — each child once (its newest run), active ones first; ``recent`` are those that
  ended in the last ``recentMinutes``. ``child = {index, runId, sessionKey, label, task,
  status, startedAt, endedAt, runtimeMs}`` with ``status`` ``running``, ``done``, ``failed``,
  ``timeout``, ``killed`` or ``lost``.
- ``target`` is ``all`` (kill only), a list index (``1``, ``#1``), a run id, a child session
  key or a label (exact, case-insensitive).
- ``kill``: the child's run and every descendant's active run end ``killed`` (no announce,
  tasks ``cancelled``) and are aborted; sessions are kept. ``{status:"ok", action, target,
  killed:[{runId, sessionKey, label}], text}``.
- ``steer``: the child's running turn is replaced by one that starts with ``message``; the
  interrupted run is not announced (``steer-restart``). ``{status:"accepted", action, target,
  runId, previousRunId, sessionKey, label, text}``.

Refusals: ``{status:"error"|"forbidden", action, error}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawline.agents.tools.base import ToolContext, ToolResult, ToolSpec
from clawline.collab.completion import LOST_ERROR
from clawline.collab.subagents import NotRunning
from clawline.collab.targets import display_key
from clawline.collab.tool_args import ArgumentError, ToolRefusal, optional_int, optional_string
from clawline.records.collab import SubagentRun
from clawline.sessions.catalog import SessionCatalog
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.clock import Clock
    from clawline.collab.subagents import SubagentRegistry
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

DEFAULT_RECENT_MINUTES = 30
_ACTIONS = ("list", "kill", "steer")

_SCHEMA: JSONObject = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(_ACTIONS)},
        "target": {
            "type": "string",
            "description": "all, a list index, a run id, a child session key or a label.",
        },
        "message": {"type": "string", "description": "steer: the new instruction."},
        "recentMinutes": {"type": "number", "minimum": 1},
    },
}


def run_status(record: SubagentRun) -> str:
    if record.active:
        return "running"
    if record.suppress_announce_reason in ("killed", "steer-restart"):
        return "killed"
    outcome = record.outcome or {}
    if outcome.get("status") == "ok":
        return "done"
    if outcome.get("status") == "timeout":
        return "timeout"
    return "lost" if outcome.get("error") == LOST_ERROR else "failed"


@dataclass(frozen=True, slots=True)
class _Child:
    index: int
    record: SubagentRun

    def to_json(self, now: int) -> JSONObject:
        record = self.record
        started = record.started_at or record.created_at
        return {
            "index": self.index,
            "runId": record.run_id,
            "sessionKey": record.child_session_key,
            "label": record.label,
            "task": record.task,
            "status": run_status(record),
            "startedAt": started,
            "endedAt": record.ended_at,
            "runtimeMs": (record.ended_at or now) - started,
        }

    @property
    def name(self) -> str:
        return self.record.label or self.record.child_session_key


def _children(records: Sequence[SubagentRun], now: int, recent_ms: int) -> list[_Child]:
    """Each child once (newest run), active first, then those ended within ``recent_ms``."""
    newest: dict[str, SubagentRun] = {}
    for record in records:  # oldest first
        newest[record.child_session_key] = record
    active = [r for r in newest.values() if r.active]
    recent = [r for r in newest.values() if not r.active and (r.ended_at or 0) >= now - recent_ms]
    recent.sort(key=lambda r: r.ended_at or 0, reverse=True)
    return [_Child(n, record) for n, record in enumerate([*active, *recent], start=1)]


def _resolve(target: str, children: Sequence[_Child], everyone: Sequence[SubagentRun]) -> _Child:
    token = target.strip()
    number = token[1:] if token.startswith("#") else token
    if number.isdigit():
        for child in children:
            if child.index == int(number):
                return child
        raise ToolRefusal(f"Unknown subagent target: {target}")
    newest: dict[str, SubagentRun] = {}
    for record in everyone:
        newest[record.child_session_key] = record
    pool = [_Child(0, record) for record in newest.values()]
    for child in pool:
        if token in (child.record.run_id, child.record.child_session_key):
            return child
    labelled = [c for c in pool if c.record.label and c.record.label.lower() == token.lower()]
    if len(labelled) > 1:
        keys = ", ".join(c.record.child_session_key for c in labelled)
        raise ToolRefusal(f"Ambiguous subagent target: {target} ({keys})")
    if labelled:
        return labelled[0]
    raise ToolRefusal(f"Unknown subagent target: {target}")


class SubagentsTool:
    """The ``subagents`` tool (module docstring): kills and steers through ``subagents``."""

    spec = ToolSpec(
        name="subagents",
        description=(
            "List the subagents this session spawned, kill one (and everything it spawned), "
            "or steer a running one with a new instruction."
        ),
        parameters=_SCHEMA,
    )

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        subagents: SubagentRegistry,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._clock = clock
        self._subagents = subagents

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        action = "list"
        try:
            action = optional_string(args, "action") or "list"
            if action not in _ACTIONS:
                raise ArgumentError('action must be "list", "kill" or "steer"')
            target = optional_string(args, "target")
            message = optional_string(args, "message")
            recent = optional_int(args, "recentMinutes", minimum=1) or DEFAULT_RECENT_MINUTES
        except ArgumentError as error:
            return ToolResult.error(str(error), action=action)
        try:
            return await self._act(ctx, action, target, message, recent)
        except ToolRefusal as refusal:
            return ToolResult.error(refusal.error, status=refusal.status, action=action)

    async def _act(
        self, ctx: ToolContext, action: str, target: str | None, message: str | None, recent: int
    ) -> ToolResult:
        store, workers = self._store, self._workers
        requester = self._catalog.canonical(ctx.session_key)
        entry = await workers.run(store.get, requester)
        if entry is not None and entry.subagent_control_scope == "none":
            raise ToolRefusal("Leaf subagents cannot control other sessions.", "forbidden")
        records = await workers.run(store.runs.for_controller, requester)
        now = self._clock.now_ms()
        children = _children(records, now, recent * 60_000)
        if action == "list":
            return self._list(self._catalog, requester, children, now)
        if target is None:
            raise ToolRefusal("Missing subagent target.")
        if action == "kill":
            if target.strip().lower() in ("all", "*"):
                chosen = [child.record for child in children if child.record.active]
            else:
                chosen = [_resolve(target, children, records).record]
            killed = await self._subagents.kill(chosen)
            if not killed:
                text = (
                    "No running subagent matched."
                    if len(chosen) != 1
                    else (f"{chosen[0].label or chosen[0].child_session_key} is not running.")
                )
            else:
                text = f"Killed {len(killed)} run(s)."
            return ToolResult(
                {
                    "status": "ok",
                    "action": "kill",
                    "target": target,
                    "killed": [
                        {"runId": r.run_id, "sessionKey": r.child_session_key, "label": r.label}
                        for r in killed
                    ],
                    "text": text,
                }
            )
        if message is None:
            raise ToolRefusal("Missing steer message.")
        child = _resolve(target, children, records)
        if not child.record.active:
            raise ToolRefusal(f"Subagent {child.name} is not running.")
        try:
            steered = await self._subagents.steer(child.record, message)
        except NotRunning:
            raise ToolRefusal(f"Subagent {child.name} is not running.") from None
        return ToolResult(
            {
                "status": "accepted",
                "action": "steer",
                "target": target,
                "runId": steered.run_id,
                "previousRunId": child.record.run_id,
                "sessionKey": steered.child_session_key,
                "label": steered.label,
                "text": f"Steered {child.name}.",
            }
        )

    @staticmethod
    def _list(
        catalog: SessionCatalog, requester: str, children: Sequence[_Child], now: int
    ) -> ToolResult:
        active = [c.to_json(now) for c in children if c.record.active]
        recent = [c.to_json(now) for c in children if not c.record.active]
        lines = [
            f"{c.index}. {c.name} — {run_status(c.record)} ({c.record.child_session_key})"
            for c in children
        ]
        return ToolResult(
            {
                "status": "ok",
                "action": "list",
                "requesterSessionKey": display_key(catalog, requester),
                "total": len(children),
                "active": list(active),
                "recent": list(recent),
                "text": "\n".join(lines) if lines else "No subagents.",
            }
        )
