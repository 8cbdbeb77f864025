"""``clawline channels …``: the configured channels and the outbox, read from the store.

- ``channels list`` — every channel a gateway started with this configuration has: id, whether
  it has threads, its outbox depth (pending messages) per account.
- ``channels status`` — asks the running gateway (``channels.status``): per channel and
  account, whether it is connected, when it last received something, its outbox depth.
- ``channels outbox [--status pending|delivered|failed] [--limit N] [--before ID]`` — the outbox,
  newest first: id, status, target, attempts, next attempt or delivery time, last error.

``list`` and ``outbox`` read the store directly (like ``clawline devices``); ``--format json``
prints the rows.
"""

from __future__ import annotations

import click

from clawline.channels.plugin import ChannelsPlugin
from clawline.channels.registry import ChannelRegistry
from clawline.cli.fitted_table import Cell, Column, print_table
from clawline.cli.gateway import call_gateway
from clawline.cli.render import (
    FORMAT_OPTION,
    ago,
    dump_json,
    make_console,
    printable,
    relative_time,
    status_text,
)
from clawline.cli.root import CliState, pass_state
from clawline.records.outbox import OUTBOX_STATUSES, OutboxStatus
from clawline.types import JSONObject

OUTBOX_COLUMNS = (
    Column("ID", justify="right"),
    Column("STATUS"),
    Column("TARGET", squeeze=3),
    Column("KIND", fold=2),
    Column("ATTEMPTS", justify="right"),
    Column("WHEN"),
    Column("ERROR", squeeze=1),
)
"""When too wide: cut ``ERROR``, fold ``KIND``, then cut ``TARGET``."""
STATUS_COLUMNS = (
    Column("CHANNEL"),
    Column("ACCOUNT", squeeze=1),
    Column("CONNECTED"),
    Column("LAST EVENT"),
    Column("OUTBOX", justify="right"),
)
"""When too wide: cut ``ACCOUNT``."""
CHANNEL_COLUMNS = (
    Column("CHANNEL"),
    Column("THREADS"),
    Column("ACCOUNT", squeeze=1),
    Column("OUTBOX", justify="right"),
)
"""When too wide: cut ``ACCOUNT``."""


@click.group("channels")
def channels() -> None:
    """The configured channels and their outbox."""


@channels.command("list")
@FORMAT_OPTION
@pass_state
def list_channels(state: CliState, output_format: str) -> None:
    """The channels of this configuration, with their outbox depth per account."""
    registry = ChannelRegistry()
    ChannelsPlugin(state.settings.config.channels).register_channels(registry)
    depth = state.open_store().outbox.pending_counts()
    rows: list[JSONObject] = []
    for channel in registry.ids():
        adapter = registry.get(channel)
        assert adapter is not None
        threads = adapter.capabilities("default").adapter_available
        accounts = sorted({account for name, account in depth if name == channel}) or ["default"]
        rows.extend(
            {
                "channel": channel,
                "threads": threads,
                "accountId": account,
                "outbox": depth.get((channel, account), 0),
            }
            for account in accounts
        )
    if output_format == "json":
        click.echo(dump_json({"channels": rows}))
        return
    cells = [
        (
            str(row["channel"]),
            "yes" if row["threads"] else "no",
            printable(str(row["accountId"])),
            str(row["outbox"]),
        )
        for row in rows
    ]
    print_table(make_console(), CHANNEL_COLUMNS, cells)


@channels.command("status")
@click.option("--url", metavar="URL", help="Gateway URL (else CLAWLINE_GATEWAY_URL, config).")
@click.option("--token", metavar="T", help="Gateway token (else CLAWLINE_GATEWAY_TOKEN, config).")
@FORMAT_OPTION
@pass_state
def status(state: CliState, url: str | None, token: str | None, output_format: str) -> None:
    """The running gateway's channels: connected, last event, outbox depth."""
    payload = call_gateway(state, "channels.status", {}, url=url, token=token)
    rows = payload.get("channels", []) if isinstance(payload, dict) else []
    if output_format == "json":
        click.echo(dump_json({"channels": rows}))
        return
    now = state.clock.now_ms()
    cells: list[tuple[Cell, ...]] = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        connected = row.get("connected")
        last = row.get("lastEventAt")
        cells.append(
            (
                printable(str(row.get("channel"))),
                printable(str(row.get("accountId"))),
                "-" if connected is None else ("yes" if connected else "no"),
                ago(last, now) if isinstance(last, int) else "-",
                str(row.get("outbox", 0)),
            )
        )
    print_table(make_console(), STATUS_COLUMNS, cells)


@channels.command("outbox")
@click.option("--status", type=click.Choice(OUTBOX_STATUSES), default=None, help="Only these.")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@click.option("--before", type=click.IntRange(1), default=None, help="Rows below this id.")
@FORMAT_OPTION
@pass_state
def outbox(
    state: CliState,
    status: OutboxStatus | None,
    limit: int,
    before: int | None,
    output_format: str,
) -> None:
    """The channel outbox, newest first."""
    rows = state.open_store().outbox.page(status, before, limit)
    if output_format == "json":
        click.echo(dump_json({"items": [row.to_json() for row in rows]}))
        return
    now = state.clock.now_ms()
    cells: list[tuple[Cell, ...]] = []
    for row in rows:
        when = row.delivered_at if row.status == "delivered" else row.next_attempt_at
        cells.append(
            (
                str(row.id),
                status_text(row.status),
                printable(row.target.describe()),
                row.kind,
                str(row.attempts),
                relative_time(when, now) if when else "-",
                printable(row.last_error or "-"),
            )
        )
    print_table(make_console(), OUTBOX_COLUMNS, cells)
