"""``clawline sessions …``: list, show, tree and delete (create and patch are in edit.py)."""

from __future__ import annotations

from dataclasses import replace

import click

from clawline.cli.backend import ListRequest, SessionsBackend
from clawline.cli.render import dump_json, make_console, node_json, row_json
from clawline.cli.root import CliState, CommandFailed, pass_state
from clawline.cli.treeview import NOT_IN_CATALOG, draw_forest, print_lines
from clawline.cli.views import print_detail, print_sessions_table
from clawline.lineage.tree import TreeNode, build_forest
from clawline.records.session import SessionEntry
from clawline.types import JSONObject

NOT_LISTED = "(not listed)"
"""Placeholder mark for an ancestor that is in the catalog but not in this listing."""


@click.group()
def sessions() -> None:
    """Inspect and edit the session catalog (alias: session)."""


def _collect(
    backend: SessionsBackend, request: ListRequest, walk_all: bool
) -> tuple[list[SessionEntry], str | None]:
    page = backend.list_page(request)
    entries, cursor = list(page.entries), page.next_cursor
    while walk_all and cursor is not None:
        page = backend.list_page(replace(request, cursor=cursor))
        entries.extend(page.entries)
        cursor = page.next_cursor
    return entries, cursor


def _placeholder_marks(backend: SessionsBackend, roots: list[TreeNode]) -> dict[str, str]:
    missing = [node.key for root in roots for _, node in root.walk() if node.entry is None]
    present = backend.lookup(missing) if missing else {}
    return {key: NOT_LISTED if key in present else NOT_IN_CATALOG for key in missing}


@sessions.command("list")
@click.option("--agent", "agent_id", metavar="ID", help="Only this agent's sessions.")
@click.option(
    "--active", "active_minutes", type=int, metavar="MIN", help="Only updated in the last MIN."
)
@click.option("--limit", type=int, default=100, show_default=True, help="Rows per page (≤10000).")
@click.option(
    "--format",
    "output",
    type=click.Choice(["table", "json", "tree"]),
    default="table",
    show_default=True,
)
@click.option("--tree", is_flag=True, help="Draw trees: --format tree (json stays json).")
@click.option("--cursor", metavar="C", help="Continue after a previous page (its nextCursor).")
@click.option("--all", "walk_all", is_flag=True, help="Walk every page.")
@pass_state
def list_sessions(
    state: CliState,
    agent_id: str | None,
    active_minutes: int | None,
    limit: int,
    output: str,
    tree: bool,
    cursor: str | None,
    walk_all: bool,
) -> None:
    """List sessions, newest first."""
    if tree and output != "json":
        output = "tree"
    backend = state.backend
    request = ListRequest(agent_id, active_minutes, limit, cursor)
    entries, next_cursor = _collect(backend, request, walk_all)
    if output == "json":
        envelope: JSONObject = {
            "sessions": [row_json(entry) for entry in entries],
            "count": len(entries),
            "nextCursor": next_cursor,
        }
        click.echo(dump_json(envelope))
        return
    console = make_console()
    if not entries:
        console.print("no sessions")
    elif output == "tree":
        roots = build_forest(entries, placeholders=True)
        marks = _placeholder_marks(backend, roots)
        print_lines(console, draw_forest(roots, placeholder=marks.__getitem__))
    else:
        print_sessions_table(console, entries, state.clock.now_ms())
    if next_cursor is not None:
        click.echo(f"more sessions: repeat with --cursor {next_cursor} (or use --all)", err=True)


@sessions.command("show")
@click.argument("key")
@click.option(
    "--format", "output", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--events", type=click.IntRange(min=0), default=5, show_default=True, help="Events to show."
)
@pass_state
def show_session(state: CliState, key: str, output: str, events: int) -> None:
    """Show one session: entry, lineage, children and latest transcript events."""
    detail = state.backend.detail(key, events=events)
    if output == "json":
        document = row_json(detail.entry)
        document["children"] = list(detail.children)
        click.echo(dump_json(document))
        return
    print_detail(make_console(), detail, state.clock.now_ms())


@sessions.command("tree")
@click.argument("key", required=False)
@click.option(
    "--format", "output", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@pass_state
def tree_command(state: CliState, key: str | None, output: str) -> None:
    """Draw the tree KEY belongs to (KEY marked), or every tree in the catalog."""
    backend = state.backend
    focus: str | None = None
    if key is None:
        roots = backend.forest()
    else:
        tree = backend.tree(key)
        roots, focus = [tree.root], tree.key
    if output == "json":
        click.echo(dump_json({"trees": [node_json(root) for root in roots], "focus": focus}))
        return
    console = make_console()
    if not roots:
        console.print("no sessions")
        return
    print_lines(console, draw_forest(roots, focus=focus))


@sessions.command("delete")
@click.argument("key")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@pass_state
def delete_session(state: CliState, key: str, yes: bool) -> None:
    """Delete exactly one session. Its children stay, with their lineage unchanged."""
    backend = state.backend
    detail = backend.detail(key, events=0)
    target, children = detail.entry.key, len(detail.children)
    if not yes:
        question = f"Delete {target}? ({children} direct children will be kept)"
        if not click.confirm(question, default=False, err=True):
            raise CommandFailed("not confirmed; nothing deleted")
    deletion = backend.delete(target)
    click.echo(f"deleted {deletion.entry.key}")
    left = len(deletion.children_left)
    click.echo(f"children left in place: {left}")
    for child in deletion.children_left:
        click.echo(f"  {child}")
