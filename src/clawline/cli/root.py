"""The root ``clawline`` group: global options, settings, the backend, and error reporting.

The ``sessions`` commands use a running gateway when one is configured (``CLAWLINE_GATEWAY_URL``
or ``[gateway] url``; see :mod:`clawline.cli.remote`), else the store; ``--local`` (or an
explicit ``--store-url``) forces the store.

Expected errors (every :class:`~clawline.errors.ClawlineError`) end a command with exactly one
line, ``error: <message>``, on stderr and exit code 2 for invalid input, 1 for anything else.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import click

from clawline import __version__
from clawline.cli.backend import SessionsBackend, open_local_backend
from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.config import ConfigError, Settings, load_settings
from clawline.errors import ClawlineError, InvalidInput, LabelInUse
from clawline.store import Store, open_store

BackendFactory = Callable[[Settings, Clock], SessionsBackend]


def exit_code_for(error: ClawlineError) -> int:
    """2 for invalid input, and for a label in use (docs/cli.md: the user picks another),
    else 1."""
    return 2 if isinstance(error, InvalidInput | LabelInUse) else 1


def one_line(text: str) -> str:
    """Join the lines of ``text``: an error report is always exactly one line."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


class CommandFailed(click.ClickException):
    """A command failed for an expected reason: one ``error:`` line, no traceback."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))

    @staticmethod
    def from_error(error: ClawlineError) -> CommandFailed:
        # every problem of a configuration, on the one line (``config check`` lists them)
        text = "; ".join(error.problems) if isinstance(error, ConfigError) else str(error)
        if exit_code_for(error) == 2:
            return InputRefused(text)
        return CommandFailed(text)

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {self.format_message()}", file=file, err=file is None)


class InputRefused(CommandFailed):
    """The input was invalid (exit code 2, like a usage error)."""

    exit_code = 2


@dataclass
class CliState:
    """Per-invocation state, ``ctx.obj``. Tests pass their own (e.g. with a fake clock)."""

    clock: Clock = SYSTEM_CLOCK
    env: Mapping[str, str] | None = None
    """Environment to read settings from; ``None`` means ``os.environ``."""
    backend_factory: BackendFactory = open_local_backend
    state_dir: Path | None = None
    store_url: str | None = None
    local: bool = False
    """Use the store even when a gateway is configured."""
    _settings: Settings | None = field(default=None, init=False, repr=False)
    _backend: SessionsBackend | None = field(default=None, init=False, repr=False)

    @property
    def environment(self) -> Mapping[str, str]:
        return os.environ if self.env is None else self.env

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            env = dict(self.environment)
            if self.state_dir is not None:
                env["CLAWLINE_STATE_DIR"] = str(self.state_dir)
            if self.store_url is not None:
                env["CLAWLINE_STORE_URL"] = self.store_url
            self._settings = load_settings(env)
        return self._settings

    @property
    def backend(self) -> SessionsBackend:
        """Opened on first use, so ``--help`` and ``--version`` never touch a store."""
        if self._backend is None:
            self._backend = self._open_backend()
        return self._backend

    def _open_backend(self) -> SessionsBackend:
        if not self.local:
            from clawline.client.target import configured_gateway

            target = configured_gateway(self.settings, self.environment)
            if target is not None:
                from clawline.cli.remote import open_gateway_backend

                return open_gateway_backend(target, self.settings, self.clock)
        return self.backend_factory(self.settings, self.clock)

    def open_store(self) -> Store:
        """The configured store, read directly (``clawline devices``, ``channels``,
        ``instances``); closed when the command ends."""
        settings = self.settings
        store = open_store(
            settings.store_url, default_sqlite_path=settings.sqlite_path, pool=settings.store_pool
        )
        click.get_current_context().call_on_close(store.close)
        return store

    def close(self) -> None:
        if self._backend is not None:
            backend, self._backend = self._backend, None
            backend.close()


pass_state = click.make_pass_decorator(CliState)


class ClawlineGroup(click.Group):
    """A group that turns :class:`ClawlineError` into :class:`CommandFailed`."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ClawlineError as error:
            raise CommandFailed.from_error(error) from None


COMMAND_ALIASES = {"session": "sessions"}
"""Other names of the root's commands (not listed by ``--help``)."""


class RootGroup(ClawlineGroup):
    """The root group, which also knows its commands by their :data:`COMMAND_ALIASES`."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, COMMAND_ALIASES.get(cmd_name, cmd_name))


@click.group(cls=RootGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="clawline")
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="PATH",
    default=None,
    help="State directory (overrides CLAWLINE_STATE_DIR; default ~/.clawline).",
)
@click.option(
    "--store-url",
    default=None,
    metavar="URL",
    help="Store URL, sqlite:///path.db or postgresql://… (overrides CLAWLINE_STORE_URL; "
    "implies --local).",
)
@click.option(
    "--local",
    is_flag=True,
    help="Use the store directly even when a gateway is configured.",
)
@click.pass_context
def cli(ctx: click.Context, state_dir: Path | None, store_url: str | None, local: bool) -> None:
    """clawline: a multi-agent session gateway."""
    state = ctx.ensure_object(CliState)
    if state_dir is not None:
        state.state_dir = state_dir
    if store_url is not None:
        state.store_url = store_url
        state.local = True
    if local:
        state.local = True
    ctx.call_on_close(state.close)
