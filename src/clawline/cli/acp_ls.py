"""``clawline acp ls``: the sessions of any ACP agent, as a table, a lineage tree or JSON.

The agent is started as a subprocess (by default clawline's own bridge, ``python -m clawline
acp``), initialised, and every ``session/list`` page is walked (no page cap; a repeated or
blank cursor stops the walk with an error). Lineage comes from each row's ``_meta``: the parent
is ``parentSessionId``, else ``spawnedBy`` (the family operation's parse rules), and a row whose
parent is absent or not listed is a root.

The default bridge's stderr is kept aside: when it fails, its own ``error:`` line (why it could
not reach the gateway) is the command's one error line instead of ``ACP process exited with code
1``; when it succeeds, whatever it logged is passed on. Meanwhile a spinner shows on a terminal
(:func:`~clawline.cli.render.progress`). An agent given after ``--`` writes to our stderr
directly, so it gets no spinner to garble.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

import click
from rich.text import Text
from rich.tree import Tree

from clawline.acp_client.agent_calls import AcpClientError
from clawline.acp_client.family_loader import NO_SESSION_LIST, parse_parent
from clawline.acp_client.link import spawned_agent
from clawline.acp_client.walk import SessionRow, js_trim, walk_session_list
from clawline.cli.fitted_table import Column, print_table
from clawline.cli.render import make_console, printable, progress
from clawline.cli.root import CliState, CommandFailed, InputRefused
from clawline.errors import ClawlineError

LISTED_FIELDS = ("sessionId", "title", "updatedAt", "parent", "cwd", "_meta")
LS_COLUMNS = (
    Column("SESSION", squeeze=5),
    Column("TITLE", squeeze=4, max_width=40),
    Column("UPDATED", fold=3),
    Column("PARENT", fold=1),
    Column("CWD", fold=2),
)
"""When too wide: fold ``PARENT``, ``CWD``, ``UPDATED``, then cut ``TITLE``, then ``SESSION``."""
_NONE = "-"
_ERROR_PREFIX = "error: "


async def list_agent_sessions(
    command: Sequence[str], env: Mapping[str, str] | None = None, stderr: int | None = None
) -> list[SessionRow]:
    """Every row the agent lists, pages walked to the end; the agent is stopped afterwards.
    It runs with ``env`` (default: ours) and writes to ``stderr`` (a descriptor; default:
    ours)."""
    environment = dict(os.environ if env is None else env)
    async with spawned_agent(
        command[0], *command[1:], env=environment, stderr=stderr, require_load=False
    ) as link:
        features = await link.ready()
        if not features.lists_sessions:
            raise AcpClientError(NO_SESSION_LIST)
        return await walk_session_list(link, max_pages=None)


def listed_sessions(rows: Iterable[SessionRow]) -> list[dict[str, Any]]:
    """The JSON rows, first occurrence of each ``sessionId`` kept, in the agent's order."""
    listed: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["sessionId"] in listed:
            continue
        title, updated_at, meta = row.get("title"), row.get("updatedAt"), row.get("_meta")
        listed[row["sessionId"]] = {
            "sessionId": row["sessionId"],
            "title": title if type(title) is str else None,
            "updatedAt": updated_at if type(updated_at) is str else None,
            "parent": parse_parent(row),
            "cwd": row["cwd"],
            "_meta": meta if type(meta) is dict else None,
        }
    return list(listed.values())


def bridge_command(state: CliState | None, url: str | None) -> list[str]:
    """``python -m clawline [--state-dir D] [--store-url S] acp [--url U]``: clawline's own
    bridge, with the root options of this invocation."""
    command = [sys.executable, "-m", "clawline"]
    if state is not None and state.state_dir is not None:
        command += ["--state-dir", str(state.state_dir)]
    if state is not None and state.store_url is not None:
        command += ["--store-url", state.store_url]
    command.append("acp")
    if url is not None:
        command += ["--url", url]
    return command


def _shown_title(session: dict[str, Any]) -> str | None:
    """The trimmed title, unless it is blank or only repeats the id."""
    title = session["title"]
    shown = js_trim(title) if title is not None else ""
    return shown if shown and shown != session["sessionId"] else None


def _label(session: dict[str, Any]) -> Text:
    title = _shown_title(session)
    text = printable(session["sessionId"])
    label = text if title is None else f"{text}  {printable(title)}"
    return Text(label, no_wrap=True, overflow="ellipsis")


def lineage_trees(sessions: list[dict[str, Any]]) -> list[Tree]:
    """One tree per root, children in listing order. Rows caught in a parent cycle have no
    root; each such group is drawn from its first listed row."""
    by_id = {session["sessionId"]: session for session in sessions}
    children: dict[str, list[dict[str, Any]]] = {}
    for session in sessions:
        if session["parent"] in by_id:
            children.setdefault(session["parent"], []).append(session)
    roots = [s for s in sessions if s["parent"] not in by_id]
    drawn: set[str] = set()
    trees: list[Tree] = []
    for root in [*roots, *sessions]:
        if root["sessionId"] in drawn:
            continue
        tree = Tree(_label(root))
        drawn.add(root["sessionId"])
        pending = [(tree, root)]
        while pending:
            node, session = pending.pop()
            for child in children.get(session["sessionId"], []):
                if child["sessionId"] not in drawn:
                    drawn.add(child["sessionId"])
                    pending.append((node.add(_label(child)), child))
        trees.append(tree)
    return trees


def _group_option(ctx: click.Context, name: str) -> str | None:
    """An option given to the ``clawline acp`` group (``clawline acp --url U ls``)."""
    value = ctx.parent.params.get(name) if ctx.parent is not None else None
    return value if isinstance(value, str) else None


def _print_table(sessions: list[dict[str, Any]]) -> None:
    rows = [
        tuple(
            printable(cell)
            for cell in (
                s["sessionId"],
                _shown_title(s) or _NONE,
                s["updatedAt"] or _NONE,
                s["parent"] or _NONE,
                s["cwd"],
            )
        )
        for s in sessions
    ]
    print_table(make_console(), LS_COLUMNS, rows)


def _reported_error(log: IO[bytes]) -> str | None:
    """The last ``error:`` line the bridge wrote, without the prefix."""
    log.seek(0)
    lines = log.read().decode(errors="replace").splitlines()
    errors = [line.removeprefix(_ERROR_PREFIX) for line in lines if line.startswith(_ERROR_PREFIX)]
    return errors[-1] if errors else None


def _pass_on(log: IO[bytes]) -> None:
    log.seek(0)
    sys.stderr.write(log.read().decode(errors="replace"))


def _list_through_bridge(command: Sequence[str], env: Mapping[str, str]) -> list[SessionRow]:
    with tempfile.TemporaryFile() as log:
        try:
            rows = asyncio.run(list_agent_sessions(command, env, stderr=log.fileno()))
        except ClawlineError:
            reported = _reported_error(log)
            if reported is None:
                _pass_on(log)
                raise
            raise CommandFailed(reported) from None
        _pass_on(log)
        return rows


@click.command("ls")
@click.option("--tree", is_flag=True, help="Draw the lineage trees instead of a table.")
@click.option(
    "--format",
    "output",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="json prints {sessions: [...]} (the same with or without --tree).",
)
@click.option("--url", metavar="URL", default=None, help="Gateway URL for the default bridge.")
@click.argument("agent_command", nargs=-1, type=click.UNPROCESSED, metavar="[-- AGENT COMMAND…]")
@click.pass_context
def ls(
    ctx: click.Context, tree: bool, output: str, url: str | None, agent_command: tuple[str, ...]
) -> None:
    """List the sessions of an ACP agent (default: clawline's own bridge).

    \b
    clawline acp ls --tree
    clawline acp --url ws://127.0.0.1:18789 ls --format json
    clawline acp ls -- openclaw acp
    """
    url = url if url is not None else _group_option(ctx, "url")
    token = _group_option(ctx, "token")
    if agent_command and (url is not None or token is not None):
        raise InputRefused("--url and --token apply only to the default bridge")
    state = ctx.find_object(CliState)
    env = dict(os.environ if state is None else state.environment)
    if token is not None:
        env["CLAWLINE_GATEWAY_TOKEN"] = token  # not on the bridge's command line (ps shows it)
    try:
        if agent_command:
            rows = asyncio.run(list_agent_sessions(agent_command, env))
        else:
            with progress("listing sessions…"):
                rows = _list_through_bridge(bridge_command(state, url), env)
    except ClawlineError as error:
        raise CommandFailed.from_error(error) from None
    sessions = listed_sessions(rows)
    if output == "json":
        click.echo(json.dumps({"sessions": sessions}, indent=2, ensure_ascii=False))
    elif tree:
        console = make_console()
        for drawn in lineage_trees(sessions):
            console.print(drawn)
    else:
        _print_table(sessions)
