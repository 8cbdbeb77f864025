"""``clawline config``: the effective configuration, and every problem of it.

- ``config show`` prints the configuration a gateway started here would use — config.toml with
  every default filled in and the environment's overrides applied — as TOML (``--json``:
  JSON). Secrets are masked.
- ``config check`` prints every problem, one line each (``config: <key> must be …``), and
  exits 1; a good configuration prints nothing and exits 0. It checks the file, the model
  references against the providers (plugins' included) and the gateway options the file and
  the environment imply.
"""

from __future__ import annotations

from typing import Any

import click
import tomli_w

from clawline.cli.render import dump_json
from clawline.cli.root import CliState, pass_state
from clawline.config import MASK, ConfigError, Settings, agents_config
from clawline.errors import ClawlineError


@click.group("config")
def config() -> None:
    """Show or check the configuration (config.toml and the environment)."""


def _effective(state: CliState) -> dict[str, Any]:
    settings = state.settings
    shown = settings.config.model_dump(mode="json", by_alias=True, exclude_none=True)
    if settings.store_url:
        shown["store"]["url"] = settings.store_url
    if state.environment.get("CLAWLINE_GATEWAY_TOKEN"):
        shown["gateway"]["token"] = MASK
    for name in ("PORT", "BIND"):
        value = state.environment.get(f"CLAWLINE_GATEWAY_{name}")
        if value:
            shown["gateway"][name.lower()] = (
                int(value) if name == "PORT" and value.isdigit() else value
            )
    return shown


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of TOML.")
@pass_state
def show(state: CliState, as_json: bool) -> None:
    """Print the effective configuration, defaults included, secrets masked."""
    shown = _effective(state)
    click.echo(dump_json(shown) if as_json else tomli_w.dumps(shown).rstrip("\n"))


def _problems(state: CliState) -> list[str]:
    try:
        settings = state.settings
    except ConfigError as error:
        return list(error.problems)
    problems: list[str] = []
    problems.extend(_model_problems(settings))
    from clawline.gateway.options import resolve_gateway_settings

    try:
        resolve_gateway_settings(settings, env=state.environment)
    except ConfigError as error:
        problems.extend(error.problems)
    return problems


def _model_problems(settings: Settings) -> list[str]:
    """Model references naming a provider neither the file nor a plugin defines."""
    from clawline.agents.providers.registry import ProviderRegistry
    from clawline.plugins.manager import PluginManager

    providers = ProviderRegistry()
    try:
        PluginManager.from_settings(settings).register_providers(providers)
        agents_config(
            settings.config, settings.state_dir, plugin_providers=providers.plugin_provider_names()
        )
    except ConfigError as error:
        return list(error.problems)
    except ClawlineError as error:
        return [str(error)]
    return []


@config.command("check")
@pass_state
def check(state: CliState) -> None:
    """Print every problem of the configuration, one per line; exit 1 when there is one."""
    problems = _problems(state)
    for line in problems:
        click.echo(line)
    if problems:
        raise click.exceptions.Exit(1)
