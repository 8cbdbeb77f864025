"""``clawline instances``: the gateway instances of the store, read from it directly.

One row per instance — id, state (``live``; ``lapsed``: its lease ran out and no one has taken
it over yet; ``stopped``; ``recovered``: another instance took over what it left), host, pid,
address, start, last heartbeat — and what it answers for: the runs it accepted (``RUNS``), the
active sub-agent records it watches (``SUBAGENTS``), the persistent ACP children whose agent
processes it holds (``ACP``) and the channel connections it holds (``CHANNELS``). By default
the running ones (live or lapsed); ``--all`` adds the most recent stopped and recovered ones.
``--format json`` prints the rows.
"""

from __future__ import annotations

from collections import Counter

import click

from clawline.cli.fitted_table import Column, print_table
from clawline.cli.render import FORMAT_OPTION, ago, dump_json, make_console, printable, utc_time
from clawline.cli.root import CliState, pass_state
from clawline.records.instance import ACP_CLAIM, CHANNEL_CLAIM, InstanceRecord
from clawline.types import JSON, JSONObject

COLUMNS = (
    Column("ID", squeeze=6),
    Column("STATE"),
    Column("HOST", fold=3),
    Column("PID", fold=2, justify="right"),
    Column("URL", squeeze=5),
    Column("STARTED", fold=1),
    Column("HEARTBEAT"),
    Column("RUNS", justify="right"),
    Column("SUBAGENTS", justify="right"),
    Column("ACP", justify="right"),
    Column("CHANNELS", squeeze=4),
)
"""When too wide: fold ``STARTED``, ``PID``, ``HOST``, then cut ``CHANNELS``, ``URL``, ``ID``."""


def _names(value: JSON) -> list[JSON]:
    return value if isinstance(value, list) else []


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
    claims = store.claims.counts()
    now = state.clock.now_ms()
    rows: list[JSONObject] = [
        {
            **record.to_json(now),
            "runs": runs.get(record.instance_id, 0),
            "subagents": subagents.get(record.instance_id, 0),
            "acpChildren": claims.get(record.instance_id, {}).get(ACP_CLAIM, 0),
            "channels": [
                claim.name for claim in store.claims.held_by(record.instance_id, CHANNEL_CLAIM)
            ],
        }
        for record in records
    ]
    if output_format == "json":
        click.echo(dump_json({"instances": rows, "store": store.location}))
        return
    cells = [
        (
            record.instance_id,
            record.state(now),
            printable(record.host),
            str(record.pid),
            printable(record.url or "-"),
            utc_time(record.started_at),
            _heartbeat(record, now),
            str(row["runs"]),
            str(row["subagents"]),
            str(row["acpChildren"]),
            printable(",".join(str(name) for name in _names(row["channels"])) or "-"),
        )
        for record, row in zip(records, rows, strict=True)
    ]
    print_table(make_console(), COLUMNS, cells)
