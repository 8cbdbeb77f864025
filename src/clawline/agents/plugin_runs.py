"""The plugins hear of runs: ``session_start`` and ``agent_end`` from the run manager's hooks
(:class:`PluginRunObserver`, which the runtime wires to the run manager). It reads run objects,
so it lives with the agents, above the plugin API it calls.

- ``session_start`` — awaited when the first run of a session (new, or reset since) starts,
  before its runner: ``{sessionKey, sessionId, runId}``;
- ``agent_end`` — after every run's end is written, as a task the run manager's shutdown waits
  for: ``{sessionKey, sessionId, runId, success, status, error?, output, messages,
  durationMs}``; ``messages`` are the transcript messages of the run (its user message and
  what the run appended), as ``chat.history`` shows them.

Nothing is read or called when no plugin implements the hook.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from clawline import keys
from clawline.agents.messages import MESSAGE_EVENT
from clawline.agents.run import Run, RunOutcome
from clawline.records.transcript import message_json
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.plugins.manager import PluginManager
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

__all__ = ["PluginRunObserver", "run_messages"]

_PAGE = 1000


def run_messages(store: Store, session_id: str, run_id: str, message_seq: int | None) -> list[JSON]:
    """Blocking: the transcript messages of one run, oldest first."""
    first = message_seq or 1
    found: list[JSON] = []
    after = first - 1
    while True:
        events = store.events(session_id, after_seq=after, limit=_PAGE)
        for event in events:
            if event.type != MESSAGE_EVENT:
                continue
            if event.seq == message_seq or event.data.get("runId") == run_id:
                found.append(message_json(event))
        if len(events) < _PAGE:
            return found
        after = events[-1].seq


class PluginRunObserver:
    """Tells the plugins of runs; the runtime wires :meth:`first_run` to
    ``runs.on_first_run`` and :meth:`run_ended` to ``runs.on_run_end``."""

    def __init__(self, *, plugins: PluginManager, store: Store, workers: StoreWorkers) -> None:
        self._plugins = plugins
        self._store = store
        self._workers = workers

    async def first_run(self, run: Run) -> None:
        """``session_start``, awaited before the run's runner."""
        plugins = self._plugins
        if not plugins.implements("session_start"):
            return
        event: JSONObject = {
            "sessionKey": run.session_key,
            "sessionId": run.session_id,
            "runId": run.run_id,
        }
        await plugins.session_start(event, plugins.context(**_fields(run)))

    def run_ended(self, run: Run, outcome: RunOutcome) -> Awaitable[None] | None:
        """``agent_end``, as a task of the run manager (nothing when no plugin listens)."""
        return self._agent_end(run, outcome) if self._plugins.implements("agent_end") else None

    async def _agent_end(self, run: Run, outcome: RunOutcome) -> None:
        plugins = self._plugins
        messages: list[JSON] = []
        if run.session_id is not None:
            messages = await self._workers.run(
                run_messages, self._store, run.session_id, run.run_id, run.message_seq
            )
        started = outcome.started_at if outcome.started_at is not None else outcome.ended_at
        event: JSONObject = {
            "sessionKey": run.session_key,
            "sessionId": run.session_id,
            "runId": run.run_id,
            "success": outcome.ok,
            "status": outcome.status,
            "output": outcome.text,
            "messages": messages,
            "durationMs": outcome.ended_at - started,
        }
        if outcome.error is not None:
            event["error"] = outcome.error
        await plugins.agent_end(event, plugins.context(**_fields(run)))


def _fields(run: Run) -> dict[str, str]:
    return {
        "session_key": run.session_key,
        "run_id": run.run_id,
        "agent_id": keys.agent_id_of(run.session_key),
    }
