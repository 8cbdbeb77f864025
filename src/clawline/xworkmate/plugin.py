"""The plugin object, :class:`XWorkmatePlugin`: its gateway methods and agent tool, and what it
does when it starts, when a session starts and when a run ends.

- ``startup``: keep the :class:`~clawline.plugins.host.PluginHost` and parse
  ``[plugins.xworkmate]`` once (a bad value is logged here, and every method and tool call
  then answers with it);
- ``session_start``: for a session XWorkmate mapped, prepare the run's artifact scope and
  refresh the mapping (source ``session_start`` when it is new). A session without a mapping
  has no app thread to record, so nothing is done for it. Failures are logged
  (``xworkmate session_start preparation failed: …``), never raised.
- ``agent_end``: for a session with this plugin's data, record the run's end and
  end its native task (the session's task of the run): ``done`` → ``succeeded``, ``failed`` →
  ``failed``, ``timeout`` → ``timed_out``, ``killed`` → ``cancelled``.

One object per gateway (:func:`clawline.xworkmate.make_plugin`), so two gateways in
one process never share a host.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawline.errors import ClawlineError
from clawline.plugins.context import HookContext
from clawline.plugins.hookspecs import hookimpl
from clawline.xworkmate.constants import LOGGER_NAME, PLUGIN_ID
from clawline.xworkmate.gateway_methods import register_methods
from clawline.xworkmate.mapping import read_mapping, storage_key, upsert_mapping
from clawline.xworkmate.native import END_STATUSES, finish_native_task
from clawline.xworkmate.open_params import optional_string
from clawline.xworkmate.paths import make_directory
from clawline.xworkmate.scope import TaskScope
from clawline.xworkmate.state import NOT_STARTED, XWorkmateNotStarted, XWorkmateState
from clawline.xworkmate.task_runs import record_run_ended
from clawline.xworkmate.tool import ArtifactsTool
from clawline.xworkmate.workspace_root import open_root, resolve_root

if TYPE_CHECKING:
    from clawline.plugins.host import PluginHost
    from clawline.plugins.registrars import MethodRegistrar, ToolRegistrar

log = logging.getLogger(LOGGER_NAME)


def _session_and_run(event: Mapping[str, Any], ctx: HookContext) -> tuple[str, str]:
    session_key = optional_string(ctx.session_key) or optional_string(event.get("sessionKey"))
    run_id = optional_string(event.get("runId")) or optional_string(ctx.run_id)
    return session_key, run_id


def _make_scope(root: Path, scope: TaskScope) -> None:
    with open_root(root, create=True) as top:
        make_directory(top, scope.relative)


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, Sequence):
        return ""
    parts = [
        block["text"]
        for block in content
        if isinstance(block, Mapping)
        and block.get("type") in ("text", "output_text")
        and isinstance(block.get("text"), str)
    ]
    return "\n".join(parts)


def last_assistant_text(event: Mapping[str, Any]) -> str:
    """The run's output: the last assistant message's text, else the event's ``output``."""
    messages = event.get("messages")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, Mapping) and message.get("role") == "assistant":
                text = _text_of(message.get("content"))
                if text:
                    return text
    output = event.get("output")
    return output if isinstance(output, str) else ""


def _is_xworkmate_session(host: PluginHost, session_key: str) -> bool:
    """Whether the session carries this plugin's data (prepare always writes its mapping to the
    session its native task belongs to): one read per run end."""
    entry = host.session(session_key)
    return entry is not None and bool(entry.plugin_extensions.get(PLUGIN_ID))


class XWorkmatePlugin:
    """The XWorkmate multi-session plugin (see the module docstring)."""

    PLUGIN_ID = PLUGIN_ID

    def __init__(self) -> None:
        self._state: XWorkmateState | None = None
        self._startup_error: ClawlineError | None = None

    def state(self) -> XWorkmateState:
        """The host and settings ``startup`` took; before it (or when its configuration was
        refused) the error to answer with."""
        if self._state is not None:
            return self._state
        raise self._startup_error or XWorkmateNotStarted(NOT_STARTED)

    # --- registration ------------------------------------------------------------------------

    @hookimpl
    def register_gateway_methods(self, methods: MethodRegistrar) -> None:
        register_methods(methods, self.state)

    @hookimpl
    def register_tools(self, tools: ToolRegistrar) -> None:
        tools.register(ArtifactsTool(state=self.state))

    # --- lifecycle ---------------------------------------------------------------------------

    @hookimpl
    def startup(self, host: PluginHost) -> None:
        """Keep ``host`` and check ``[plugins.xworkmate]`` once, so a bad value is logged
        early."""
        self._state, self._startup_error = None, None
        try:
            config = host.settings.plugins.xworkmate.effective(
                state_dir=host.state_dir, allow_hardlinks=host.allow_hardlinks, env=os.environ
            )
        except ClawlineError as error:
            self._startup_error = error
            raise
        self._state = XWorkmateState(host, config)

    @hookimpl
    def shutdown(self, host: PluginHost) -> None:
        self._state = None

    @hookimpl
    async def session_start(self, event: dict[str, Any], ctx: HookContext) -> None:
        session_key, run_id = _session_and_run(event, ctx)
        if not session_key or not run_id:
            return
        host = ctx.host
        try:
            mapping = await host.run(read_mapping, session_key, host=host)
            if mapping is None:
                return
            config = self.state().config
            key = mapping.openclaw_session_key
            await host.run(
                lambda: upsert_mapping(
                    host=host,
                    app_thread_key=mapping.app_thread_key,
                    openclaw_session_key=key,
                    expected_artifact_dirs=mapping.expected_artifact_dirs,
                    source="session_start",
                    create=False,
                )
            )
            root = resolve_root(key, None, host=host, config=config)
            scope = TaskScope(key, run_id)
            await asyncio.to_thread(_make_scope, root, scope)
        except (ClawlineError, OSError) as error:
            log.warning("xworkmate session_start preparation failed: %s", error)

    @hookimpl
    async def agent_end(self, event: dict[str, Any], ctx: HookContext) -> None:
        session_key, run_id = _session_and_run(event, ctx)
        if not session_key or not run_id:
            return
        host = ctx.host
        success = event.get("success") is True
        output = last_assistant_text(event)
        error = event.get("error") if isinstance(event.get("error"), str) else None
        status = END_STATUSES.get(str(event.get("status")), "succeeded" if success else "failed")
        try:
            if not await host.run(_is_xworkmate_session, host, session_key):
                return
            canonical = storage_key(session_key, host=host)

            def record() -> None:
                finish_native_task(
                    canonical, run_id, host=host, status=status, summary=output, error=error
                )
                record_run_ended(
                    session_key, run_id, host=host, success=success, output=output, error=error
                )

            await host.run(record)
        except ClawlineError as error_:
            log.warning("xworkmate agent_end recording failed for %s: %s", run_id, error_)
