"""``clawline plugins``: the plugins a gateway started with these settings would load.

The built-ins (described from their classes: the runtime builds them with their parts), the
``clawline`` entry points and ``[plugins] enabled`` of config.toml, each with its source and the
hooks it implements, then the plugins that could not be loaded. Nothing else is touched: no
store, no gateway. ``--format json`` prints
``{"plugins": [{name, source, origin, hooks}], "failures": [{name, source, error}]}``.
"""

from __future__ import annotations

import click

from clawline.cli.fitted_table import Column, print_table
from clawline.cli.render import FORMAT_OPTION, dump_json, make_console, printable
from clawline.cli.root import CliState, CommandFailed, pass_state
from clawline.plugins.manager import PluginInfo, PluginManager
from clawline.types import JSONObject

PLUGIN_COLUMNS = (
    Column("NAME", squeeze=3),
    Column("SOURCE"),
    Column("ORIGIN", fold=2),
    Column("HOOKS", squeeze=1),
)
"""When too wide: cut ``HOOKS``, fold ``ORIGIN``, then cut ``NAME``."""


def _listed(manager: PluginManager) -> list[PluginInfo]:
    return [*PluginManager.builtin_plugins(), *manager.plugins()]


def _json(manager: PluginManager) -> JSONObject:
    return {
        "plugins": [
            {"name": p.name, "source": p.source, "origin": p.origin, "hooks": list(p.hooks)}
            for p in _listed(manager)
        ],
        "failures": [
            {"name": f.name, "source": f.source, "error": f.error} for f in manager.failures
        ],
    }


def _rows(manager: PluginManager) -> list[tuple[str, ...]]:
    return [
        (
            printable(plugin.name),
            plugin.source,
            printable(plugin.origin),
            ", ".join(plugin.hooks) or "-",
        )
        for plugin in _listed(manager)
    ]


@click.command("plugins")
@FORMAT_OPTION
@pass_state
def plugins(state: CliState, output_format: str) -> None:
    """List the plugins: name, source (builtin, entry point, config) and hooks."""
    manager = PluginManager.from_settings(state.settings)
    if output_format == "json":
        click.echo(dump_json(_json(manager)))
    else:
        console = make_console()
        print_table(console, PLUGIN_COLUMNS, _rows(manager))
        for failure in manager.failures:
            console.print(
                f"not loaded: {printable(failure.name)} ({failure.source}): "
                f"{printable(failure.error)}",
                soft_wrap=True,
            )
    if manager.failures:
        raise CommandFailed(f"{len(manager.failures)} plugin(s) could not be loaded")
