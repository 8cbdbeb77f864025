"""What a plugin may use of the gateway: :class:`PluginHost`, the plugins' facade.

The runtime builds one host from its parts and hands it to every plugin: ``startup(host)`` and
``shutdown(host)`` receive it, and every lifecycle hook's context carries it
(``ctx.host``, :class:`~clawline.plugins.context.HookContext`). A plugin that needs it outside a
hook call (its agent tool, its gateway methods) keeps the one its ``startup`` hook received.
What it offers of the agents it gets as plain values (the workspaces as ``workspace_of``, the
hard-link setting as a bool), so the plugin API names nothing above it.

Blocking and non-blocking operations are kept apart:

- **store reads and writes** (:meth:`~PluginHost.session`, the session extensions, the task
  registry) are blocking: call them on a store worker, several in one call when they belong
  together::

      mapping = await host.run(host.read_extension, key, PLUGIN_ID, "mapping")

  Code running on a store worker touches only the store (no event-loop state), and on
  PostgreSQL several workers run at once, so it must not rely on being the only one;
- everything else (:meth:`~PluginHost.canonical`, the workspaces, the clock, the configuration)
  is plain and may be called anywhere.

The host offers nothing else on purpose: a plugin adds gateway methods, tools, channels and
providers through the registration hooks, and learns of runs and sessions through the
lifecycle hooks (:mod:`clawline.plugins.hookspecs`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from clawline.plugins import extensions

if TYPE_CHECKING:
    from clawline.clock import Clock
    from clawline.config import ClawlineConfig
    from clawline.records.session import SessionEntry
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.workers import StoreWorkers
    from clawline.tasks.registry import TaskRegistry
    from clawline.types import JSON

P = ParamSpec("P")
T = TypeVar("T")


class PluginHost:
    """The gateway as a plugin sees it (see the module docstring).

    - **sessions**: :meth:`canonical`, :meth:`session` (blocking);
    - **session extensions** (``pluginExtensions``, :mod:`clawline.plugins.extensions`):
      :meth:`read_extension`, :meth:`update_extension`, :meth:`find_sessions` (blocking);
    - **tasks**: :attr:`tasks`, the task registry with its public operations (``get``,
      ``create``, ``finish``, ``for_run``, ``latest_for_session``, …; blocking);
    - **workspaces**: :meth:`workspace` of an agent, :attr:`default_agent_id`,
      :attr:`allow_hardlinks` (``[tools.fs]``);
    - **time**: :attr:`clock`;
    - **store workers**: :meth:`run`;
    - **configuration**: :attr:`config` (config.toml as written, read-only: a plugin's own
      section), :attr:`settings` (the checked :class:`~clawline.config.ClawlineConfig`: the
      built-in plugins' sections) and :attr:`state_dir`; a plugin reads its section once, in
      its ``startup`` hook.
    """

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        tasks: TaskRegistry,
        workers: StoreWorkers,
        clock: Clock,
        workspace_of: Callable[[str], Path],
        allow_hardlinks: bool,
        config: Mapping[str, Any],
        settings: ClawlineConfig,
        state_dir: Path,
    ) -> None:
        self._catalog = catalog
        self._workers = workers
        self._workspace_of = workspace_of
        self._allow_hardlinks = allow_hardlinks
        self.tasks = tasks
        """The task registry (:class:`~clawline.tasks.registry.TaskRegistry`); blocking."""
        self.clock = clock
        self.config: Mapping[str, Any] = MappingProxyType(dict(config))
        """The whole parsed config.toml (read-only); ``[plugins.entries.<id>.config]`` is also
        in every hook context as ``ctx.config``."""
        self.settings = settings
        """The checked configuration (every section clawline knows)."""
        self.state_dir = state_dir

    # --- store workers -------------------------------------------------------------------------

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run the blocking ``fn(*args, **kwargs)`` on a store worker and return its result."""
        return await self._workers.run(fn, *args, **kwargs)

    # --- sessions ------------------------------------------------------------------------------

    def canonical(self, session_key: object) -> str:
        """The stored form of a session key (``main`` → ``agent:main:main``); a malformed key
        raises :class:`~clawline.errors.InvalidSessionKey`."""
        return self._catalog.canonical(session_key)

    def session(self, session_key: object) -> SessionEntry | None:
        """Blocking: the session's entry, or ``None`` when it does not exist."""
        return self._catalog.get(session_key)

    # --- session extensions --------------------------------------------------------------------

    def read_extension(self, session_key: str, plugin_id: str, namespace: str) -> JSON | None:
        """Blocking: :func:`clawline.plugins.extensions.read_extension`."""
        return extensions.read_extension(session_key, plugin_id, namespace, catalog=self._catalog)

    def update_extension(
        self,
        session_key: str,
        plugin_id: str,
        namespace: str,
        update: Callable[[JSON | None], JSON | None],
        *,
        create: bool = False,
    ) -> JSON | None:
        """Blocking: :func:`clawline.plugins.extensions.update_extension` (one transaction)."""
        return extensions.update_extension(
            session_key, plugin_id, namespace, update, catalog=self._catalog, create=create
        )

    def find_sessions(self, plugin_id: str, namespace: str, field: str, value: str) -> list[str]:
        """Blocking: :func:`clawline.plugins.extensions.find_sessions` (one index lookup)."""
        return extensions.find_sessions(plugin_id, namespace, field, value, catalog=self._catalog)

    # --- workspaces ----------------------------------------------------------------------------

    @property
    def default_agent_id(self) -> str:
        """The agent of session keys that name none."""
        return self._catalog.default_agent_id

    def workspace(self, agent_id: str) -> Path:
        """The workspace directory of ``agent_id`` (where its file tools read and write; it
        may not exist yet)."""
        return self._workspace_of(agent_id)

    @property
    def allow_hardlinks(self) -> bool:
        """``[tools.fs] allowHardlinks``: whether files with more than one hard link may be
        read from a workspace."""
        return self._allow_hardlinks
