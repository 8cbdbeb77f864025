"""The ``clawline`` command line (click + rich).

Modules: ``root`` (root group, settings, error reporting), ``backend`` (the data access protocol
the commands use; ``remote`` is the gateway-backed one), ``sessions`` and ``edit`` (the
``sessions`` commands), ``gateway`` (``gateway run`` and ``gateway call``), ``render``,
``fitted_table`` (tables that fit the terminal), ``views`` and ``treeview`` (output), ``acp``
(the ACP bridge; ``acp_ls`` its ``ls`` subcommand), ``plugins`` (the plugins a gateway would
load), ``devices`` (device pairing), ``configuration`` (``config show`` and ``config check``),
``channels`` (the channels and their outbox), ``instances`` (the gateway instances of the
store). The JSON output format is documented in docs/cli.md.
"""

from __future__ import annotations

from clawline.cli.acp import acp
from clawline.cli.channel_commands import channels
from clawline.cli.configuration import config
from clawline.cli.devices import devices
from clawline.cli.edit import create_session, patch_session
from clawline.cli.gateway import gateway
from clawline.cli.instances import instances
from clawline.cli.plugins import plugins
from clawline.cli.root import cli
from clawline.cli.sessions import sessions
from clawline.cli.tasks import tasks

sessions.add_command(create_session)
sessions.add_command(patch_session)
cli.add_command(sessions)
cli.add_command(gateway)
cli.add_command(tasks)
cli.add_command(acp)
cli.add_command(plugins)
cli.add_command(devices)
cli.add_command(config)
cli.add_command(channels)
cli.add_command(instances)


def main() -> None:
    """Console script entry point."""
    cli.main(prog_name="clawline")
