"""The plugins hear of runs: ``session_start`` and ``agent_end`` from the run manager's hooks.

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
from clawline.sessions.transcript import message_json
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.agents.runs import RunManager
    from clawline.runtime import Runtime
    from clawline.store.base import Store

__all__ = ["observe_runs", "run_messages"]

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


def observe_runs(services: Runtime, runs: RunManager) -> None:
    """Fire the plugins' ``session_start`` and ``agent_end`` for the runs of ``runs``."""
    plugins = services.plugins

    async def first_run(run: Run) -> None:
        if not plugins.implements("session_start"):
            return
        event: JSONObject = {
            "sessionKey": run.session_key,
            "sessionId": run.session_id,
            "runId": run.run_id,
        }
        await plugins.session_start(event, plugins.context(**_fields(run)))

    async def agent_end(run: Run, outcome: RunOutcome) -> None:
        messages: list[JSON] = []
        if run.session_id is not None:
            messages = await services.call(
                run_messages, services.store, run.session_id, run.run_id, run.message_seq
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

    def run_ended(run: Run, outcome: RunOutcome) -> Awaitable[None] | None:
        return agent_end(run, outcome) if plugins.implements("agent_end") else None

    runs.on_first_run(first_run)
    runs.on_run_end(run_ended)


def _fields(run: Run) -> dict[str, str]:
    return {
        "session_key": run.session_key,
        "run_id": run.run_id,
        "agent_id": keys.agent_id_of(run.session_key),
    }
