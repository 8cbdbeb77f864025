"""``clawline sessions create`` and ``patch``: thin front-ends to ``SessionCatalog.patch``.

Options map to entry fields by their JSON names; every value is checked by the catalog, so a
refused change prints one ``error:`` line and writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from clawline.cli.backend import Write
from clawline.cli.render import dump_json, row_json
from clawline.cli.root import CliState, pass_state
from clawline.errors import InvalidField

F = TypeVar("F", bound=Callable[..., Any])

FIELD_OPTIONS: tuple[tuple[str, str], ...] = (
    ("label", "label"),
    ("display_name", "displayName"),
    ("parent", "parentSessionKey"),
    ("spawned_by", "spawnedBy"),
    ("spawn_depth", "spawnDepth"),
    ("role", "subagentRole"),
    ("control_scope", "subagentControlScope"),
    ("workspace", "spawnedWorkspaceDir"),
    ("cwd", "spawnedCwd"),
    ("status", "status"),
)
"""``(click parameter, entry field)`` for every field option."""


def _entry_options(function: F) -> F:
    options = [
        click.option("--label", metavar="L", help="Label (unique within the agent)."),
        click.option("--display-name", metavar="N", help="Display name."),
        click.option("--parent", metavar="KEY", help="Parent session (parentSessionKey)."),
        click.option("--spawned-by", metavar="KEY", help="Spawning session (spawnedBy)."),
        click.option("--spawn-depth", type=int, metavar="N", help="spawnDepth."),
        click.option("--role", type=click.Choice(["orchestrator", "leaf"]), help="subagentRole."),
        click.option(
            "--control-scope",
            type=click.Choice(["children", "none"]),
            help="subagentControlScope.",
        ),
        click.option("--workspace", metavar="DIR", help="spawnedWorkspaceDir."),
        click.option("--cwd", metavar="DIR", help="spawnedCwd."),
        click.option(
            "--format",
            "output",
            type=click.Choice(["text", "json"]),
            default="text",
            show_default=True,
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not allowed")


def _parse_set(item: str) -> tuple[str, object]:
    name, sep, text = item.partition("=")
    name = name.strip()
    if not sep or not name:
        raise InvalidField(f"invalid --set {item!r}: use FIELD=JSON, e.g. model='\"gpt\"'")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as error:
        raise InvalidField(f"invalid --set {name}: the value is not JSON ({error})") from None
    return name, value


def changes_from(params: Mapping[str, Any], sets: tuple[str, ...] = ()) -> dict[str, object]:
    """The change set of the field options and ``--set FIELD=JSON`` items."""
    changes: dict[str, object] = {
        field: params[param] for param, field in FIELD_OPTIONS if params.get(param) is not None
    }
    for item in sets:
        name, value = _parse_set(item)
        if name in changes:
            raise InvalidField(f"{name} is given more than once")
        changes[name] = value
    return changes


def _report(write: Write, verb: str, output: str) -> None:
    if output == "json":
        click.echo(dump_json(row_json(write.entry)))
        return
    entry = write.entry
    lineage = entry.lineage
    click.echo(f"{verb if write.changed else 'unchanged'} {entry.key}")
    click.echo(f"  lineage: {lineage.path_string} (depth {lineage.depth})")


@click.command("create")
@click.argument("key")
@_entry_options
@pass_state
def create_session(state: CliState, /, key: str, output: str, **params: Any) -> None:
    """Create a session (refuses a key that already exists)."""
    _report(state.backend.create(key, changes_from(params)), "created", output)


@click.command("patch")
@click.argument("key")
@_entry_options
@click.option("--status", metavar="S", help="running, done, failed, killed or timeout.")
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="FIELD=JSON",
    help="Set any field to a JSON value (null clears it). Repeatable.",
)
@pass_state
def patch_session(
    state: CliState, /, key: str, output: str, sets: tuple[str, ...], **params: Any
) -> None:
    """Change an existing session."""
    changes = changes_from(params, sets)
    if not changes:
        raise InvalidField("nothing to change: give at least one option")
    _report(state.backend.patch(key, changes), "patched", output)
