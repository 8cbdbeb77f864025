"""``streamTo: "parent"``: relaying an ACP child's first run to its requester
(docs/collaboration.md, "ACP children").

While the child's spawn run streams, the requester's session receives **relay messages**:
injected assistant messages (the ``chat.inject`` shape: ``{role: "assistant", content: [{type:
"text", text}], stopReason: "injected", injected: true, label: "acp:<agentId>"}``, published as
``session.message`` and a ``chat`` ``final``), which do not start a turn of the requester:

- at the spawn: ``<agentId>: started <childSessionKey>; its output is relayed here.``;
- progress: ``<agentId>: <text>`` — the child's text, gathered and sent at most every
  :data:`RELAY_FLUSH_S` seconds, before each tool step and at the end;
- tool steps: ``<agentId>: [tool] <title> (started|completed|failed)``;
- the end: ``<agentId> run completed.``, ``<agentId> run failed: <error>``, ``<agentId> run timed
  out.`` or ``<agentId> run was cancelled.``.

Everything is also logged, one JSON object per line, to ``streamLogPath`` =
``<state dir>/acp/streams/<child sessionId>.acp-stream.jsonl``: ``{ts, event: "start"|"text"|
"tool"|"end", runId, childSessionKey, …}`` (``text`` lines carry each delta as the agent sent
it; ``tool`` lines ``title`` and ``status``; ``end`` lines ``status`` and ``error``).

A relay is made by :meth:`clawline.collab.acp.children.AcpRuntime.watch`, which gives it its parts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.agents.run_manager import RunManager
    from clawline.clock import Clock

log = logging.getLogger("clawline.collab.acp")

RELAY_FLUSH_S = 1.0


def stream_log_path(state_dir: Path, child_session_id: str) -> Path:
    return state_dir / "acp" / "streams" / f"{child_session_id}.acp-stream.jsonl"


def _append_lines(path: Path, lines: list[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as file:
        file.write(b"".join(lines))


class ParentRelay:
    def __init__(
        self,
        *,
        runs: RunManager,
        clock: Clock,
        parent_key: str,
        child_key: str,
        run_id: str,
        agent_id: str,
        log_path: Path,
    ) -> None:
        self._runs = runs
        self._clock = clock
        self.parent_key = parent_key
        self.child_key = child_key
        self.run_id = run_id
        self.agent_id = agent_id
        self.log_path = log_path
        self._text = ""
        self._lines: list[bytes] = []
        self._lock = asyncio.Lock()
        self._timer: asyncio.Task[None] | None = None
        self.delivered = True
        """False once a relay message could not be delivered (the parent went away)."""

    async def start(self) -> None:
        self._log("start", agentId=self.agent_id)
        text = f"{self.agent_id}: started {self.child_key}; its output is relayed here."
        async with self._lock:
            await self._post(text)
            await self._write_log()

    async def text(self, delta: str) -> None:
        if not delta:
            return
        self._text += delta
        self._log("text", text=delta)
        if self._timer is None:
            self._timer = asyncio.ensure_future(self._flush_later())

    async def tool(self, title: str, status: str) -> None:
        self._log("tool", title=title, status=status)
        async with self._lock:
            await self._flush_text()
            await self._post(f"{self.agent_id}: [tool] {title} ({status})")

    async def finish(self, status: str, error: str | None) -> None:
        """The run ended with ``status`` (a run outcome: ``done``, ``failed``, ``timeout``,
        ``killed``)."""
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
            self._timer = None
        self._log("end", status=status, error=error)
        ending = {
            "done": f"{self.agent_id} run completed.",
            "timeout": f"{self.agent_id} run timed out.",
            "killed": f"{self.agent_id} run was cancelled.",
        }.get(status, f"{self.agent_id} run failed: {error or status}")
        async with self._lock:
            await self._flush_text()
            await self._post(ending)
            await self._write_log()

    async def _flush_later(self) -> None:
        await asyncio.sleep(RELAY_FLUSH_S)
        self._timer = None
        async with self._lock:
            await self._flush_text()

    async def _flush_text(self) -> None:
        text, self._text = self._text.strip(), ""
        if text:
            await self._post(f"{self.agent_id}: {text}")
        await self._write_log()

    async def _post(self, text: str) -> None:
        try:
            await self._runs.inject(self.parent_key, text, f"acp:{self.agent_id}")
        except Exception as error:  # the parent was deleted, or the store failed
            self.delivered = False
            log.warning("ACP relay to %s failed: %s", self.parent_key, error)

    def _log(self, event: str, **fields: JSON) -> None:
        line: JSONObject = {
            "ts": self._clock.now_ms(),
            "event": event,
            "runId": self.run_id,
            "childSessionKey": self.child_key,
        }
        line.update({name: value for name, value in fields.items() if value is not None})
        self._lines.append(orjson.dumps(line) + b"\n")

    async def _write_log(self) -> None:
        lines, self._lines = self._lines, []
        if not lines:
            return
        try:
            await asyncio.to_thread(_append_lines, self.log_path, lines)
        except OSError as error:
            log.warning("ACP stream log %s not written: %s", self.log_path, error)
