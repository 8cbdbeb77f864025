"""Recorded task runs: the plugin's own record of each run it prepared or saw end.

Stored at ``pluginExtensions[<plugin>]["xworkmate.taskRuns"] = {schemaVersion:1,
runs:{<runId>: run}}`` with run = ``{schemaVersion:1, runId, status, success, startedAt,
updatedAt, completedAt?, output?, error?}``:

- prepare records ``status:"running"``, ``success:false``;
- ``agent_end`` records ``completed``/``failed`` with ``success``, ``completedAt``, the output
  (at most 16 KiB characters) and the error (secrets redacted, then at most 2048 characters);
  ``startedAt`` is kept.

At most :data:`MAX_RECORDED_RUNS` runs are kept, the most recently updated. Blocking: call on a
store worker (``host.run``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from clawline.types import JSON, JSONObject
from clawline.xworkmate.constants import PLUGIN_ID, TASK_RUNS_NAMESPACE
from clawline.xworkmate.mapping import iso_now, storage_key

if TYPE_CHECKING:
    from clawline.plugins.host import PluginHost

MAX_RECORDED_RUNS = 32
MAX_OUTPUT_CHARS = 16 * 1024
MAX_ERROR_CHARS = 2048
REDACTED = "[REDACTED]"

_SECRET_TOKENS = re.compile(r"\b(sk|nvapi)-[A-Za-z0-9][A-Za-z0-9_-]*")
_KEY_PAIRS = re.compile(r"(\bapi[_-]?key\b[\"']?\s*[:=]\s*[\"']?)[^\s\"',;}]+", re.IGNORECASE)


def redact(text: str) -> str:
    """``sk-…`` and ``nvapi-…`` tokens and ``api_key: <value>`` values become
    ``[REDACTED]``."""
    text = _SECRET_TOKENS.sub(lambda m: f"{m.group(1)}-{REDACTED}", text)
    return _KEY_PAIRS.sub(lambda m: m.group(1) + REDACTED, text)


def trim_runs(runs: Mapping[str, Any]) -> dict[str, JSON]:
    """The :data:`MAX_RECORDED_RUNS` most recently updated runs."""
    items = [(run_id, run) for run_id, run in runs.items() if isinstance(run, dict)]
    items.sort(key=lambda item: (str(item[1].get("updatedAt", "")), item[0]), reverse=True)
    return dict(items[:MAX_RECORDED_RUNS])


RunBuilder = Callable[[dict[str, Any] | None], JSONObject]


def _write(
    host: PluginHost, session_key: str, run_id: str, build: RunBuilder, *, create: bool
) -> None:
    def update(current: JSON | None) -> JSON | None:
        runs = current.get("runs") if isinstance(current, dict) else None
        table: dict[str, Any] = dict(runs) if isinstance(runs, dict) else {}
        previous = table.get(run_id)
        table[run_id] = build(previous if isinstance(previous, dict) else None)
        return {"schemaVersion": 1, "runs": trim_runs(table)}

    host.update_extension(
        storage_key(session_key, host=host),
        PLUGIN_ID,
        TASK_RUNS_NAMESPACE,
        update,
        create=create,
    )


def record_run_started(session_key: str, run_id: str, *, host: PluginHost) -> None:
    now = iso_now(host.clock)

    def build(previous: dict[str, Any] | None) -> JSONObject:
        started = previous.get("startedAt") if previous else None
        return {
            "schemaVersion": 1,
            "runId": run_id,
            "status": "running",
            "success": False,
            "startedAt": started if isinstance(started, str) else now,
            "updatedAt": now,
        }

    _write(host, session_key, run_id, build, create=True)


def record_run_ended(
    session_key: str,
    run_id: str,
    *,
    host: PluginHost,
    success: bool,
    output: str | None,
    error: str | None,
) -> None:
    now = iso_now(host.clock)

    def build(previous: dict[str, Any] | None) -> JSONObject:
        started = previous.get("startedAt") if previous else None
        run: JSONObject = {
            "schemaVersion": 1,
            "runId": run_id,
            "status": "completed" if success else "failed",
            "success": success,
            "startedAt": started if isinstance(started, str) else now,
            "updatedAt": now,
            "completedAt": now,
        }
        if output:
            run["output"] = output[:MAX_OUTPUT_CHARS]
        if error:
            run["error"] = redact(error)[:MAX_ERROR_CHARS]
        return run

    _write(host, session_key, run_id, build, create=False)


def _runs(host: PluginHost, session_key: str) -> dict[str, Any]:
    key = storage_key(session_key, host=host)
    stored = host.read_extension(key, PLUGIN_ID, TASK_RUNS_NAMESPACE)
    runs = stored.get("runs") if isinstance(stored, dict) else None
    if not isinstance(runs, dict):
        return {}
    return {run_id: dict(run) for run_id, run in runs.items() if isinstance(run, dict)}


def read_run(session_key: str, run_id: str, *, host: PluginHost) -> dict[str, Any] | None:
    """The recorded run, if the session has one under ``run_id``."""
    return _runs(host, session_key).get(run_id)


def latest_run(session_key: str, *, host: PluginHost) -> dict[str, Any] | None:
    """The session's most recently updated recorded run."""
    runs = _runs(host, session_key)
    return next(iter(trim_runs(runs).values()), None) if runs else None  # type: ignore[return-value]
