"""``clawline acp``: serve the Agent Client Protocol on stdio, bridged to a clawline gateway.

stdout carries only ACP messages (one JSON-RPC message per line); logs go to stderr. The
command runs until stdin ends, SIGTERM or SIGINT. Subcommands (``clawline acp ls``) are
loaded lazily from :data:`SUBCOMMANDS`. See docs/acp.md.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING

import click

from clawline.cli.root import ClawlineGroup, CliState, CommandFailed

if TYPE_CHECKING:
    from clawline.acp.session_table import SessionDefaults

SUBCOMMANDS = {
    "ls": "clawline.cli.acp_ls:ls",
}
"""Subcommands of ``clawline acp``, imported only when used: name → ``module:attribute``."""


class AcpGroup(ClawlineGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *SUBCOMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = SUBCOMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module, attribute = target.split(":")
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command)
        return command


def _configure_logging(verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("clawline")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    root.propagate = False


@click.group("acp", cls=AcpGroup, invoke_without_command=True)
@click.option("--url", metavar="URL", help="Gateway URL (else CLAWLINE_GATEWAY_URL, config).")
@click.option("--token", metavar="T", help="Gateway token (else CLAWLINE_GATEWAY_TOKEN, config).")
@click.option("--session", "session_key", metavar="KEY", help="Gateway session for session/new.")
@click.option("--session-label", metavar="LABEL", help="Session label for session/new.")
@click.option(
    "--require-existing", is_flag=True, help="session/new fails unless the session exists."
)
@click.option("--reset-session", is_flag=True, help="Reset the session on session/new.")
@click.option(
    "--no-prefix-cwd", is_flag=True, help="Do not prefix prompts with the working directory."
)
@click.option("--verbose", "-v", is_flag=True, help="Log at INFO level (to stderr).")
@click.pass_context
def acp(
    ctx: click.Context,
    url: str | None,
    token: str | None,
    session_key: str | None,
    session_label: str | None,
    require_existing: bool,
    reset_session: bool,
    no_prefix_cwd: bool,
    verbose: bool,
) -> None:
    """Serve the Agent Client Protocol (ACP) on stdio, bridged to a clawline gateway.

    Without --url: the gateway that serves the state directory, else one started in this
    process. Subcommands: ls (list an ACP agent's sessions).
    """
    if ctx.invoked_subcommand is not None:
        return
    from clawline.acp.session_table import SessionDefaults

    state = ctx.find_object(CliState) or CliState()
    defaults = SessionDefaults(
        key=session_key,
        label=session_label,
        require_existing=require_existing,
        reset=reset_session,
        prefix_cwd=not no_prefix_cwd,
    )
    _configure_logging(verbose)
    try:
        asyncio.run(_serve(state, defaults, url, token))
    except OSError as error:
        raise CommandFailed(str(error)) from None


async def _serve(
    state: CliState, defaults: SessionDefaults, url: str | None, token: str | None
) -> None:
    from clawline.acp.bridge_agent import Bridge
    from clawline.acp.stdio_server import check_stdio, serve_stdio
    from clawline.acp.upstream import open_upstream

    check_stdio()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        async with open_upstream(state.settings, state.environment, url=url, token=token) as up:
            await serve_stdio(Bridge(up, defaults, os.getcwd()), stop=stop)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
