"""``clawline instances``: the gateway instances of the store, read from it directly.

One row per instance — id, state (``live``; ``lapsed``: its lease ran out and no one has taken
it over yet; ``stopped``; ``recovered``: another instance took over what it left), host, pid,
address, start, last heartbeat — and what it answers for: the runs it accepted (``RUNS``) and
the active sub-agent records it watches (``SUBAGENTS``). By default the running ones (live or
lapsed); ``--all`` adds the most recent stopped and recovered ones. ``--format json`` prints
the rows.
"""

from __future__ import annotations

from collections import Counter

import click
from rich.table import Table

from clawline.cli.render import FORMAT_OPTION, ago, dump_json, make_console, printable, utc_time
from clawline.cli.root import CliState, pass_state
from clawline.records.instance import InstanceRecord
from clawline.types import JSONObject

COLUMNS = ("ID", "STATE", "HOST", "PID", "URL", "STARTED", "HEARTBEAT", "RUNS", "SUBAGENTS")


def _heartbeat(record: InstanceRecord, now: int) -> str:
    age = max(0, now - record.heartbeat_at)
    return f"{age / 1000:.1f}s ago" if age < 60_000 else ago(record.heartbeat_at, now)


@click.command("instances")
@click.option("--all", "show_all", is_flag=True, help="Also stopped and taken-over instances.")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@FORMAT_OPTION
@pass_state
def instances(state: CliState, show_all: bool, limit: int, output_format: str) -> None:
    """The gateway instances of the store and what each answers for."""
    store = state.open_store()
    records = store.instances.recent(limit) if show_all else store.instances.running()[:limit]
    runs = store.run_owners.counts()
    subagents = Counter(record.instance_id for record in store.runs.active())
    now = state.clock.now_ms()
    rows: list[JSONObject] = [
        {
            **record.to_json(now),
            "runs": runs.get(record.instance_id, 0),
            "subagents": subagents.get(record.instance_id, 0),
        }
        for record in records
    ]
    if output_format == "json":
        click.echo(dump_json({"instances": rows, "store": store.location}))
        return
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for name in COLUMNS:
        table.add_column(name, no_wrap=True)
    for record, row in zip(records, rows, strict=True):
        table.add_row(
            record.instance_id,
            record.state(now),
            printable(record.host),
            str(record.pid),
            printable(record.url or "-"),
            utc_time(record.started_at),
            _heartbeat(record, now),
            str(row["runs"]),
            str(row["subagents"]),
        )
    make_console().print(table)
