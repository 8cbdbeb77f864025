"""Tables fit the terminal (docs/cli.md, "Tables"): at 80 and 120 columns no line is longer than
the width or ends with spaces, no cell wraps or is cut without ``…``, the documented columns
fold away; statuses are coloured on a terminal only; ``--format json`` never changes."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.cells import cell_len

from clawline.cli.acp_ls import LS_COLUMNS
from clawline.cli.channel_commands import CHANNEL_COLUMNS, OUTBOX_COLUMNS, STATUS_COLUMNS
from clawline.cli.devices import DEVICE_COLUMNS
from clawline.cli.fitted_table import Column, fit_steps, fit_widths
from clawline.cli.instances import COLUMNS as INSTANCE_COLUMNS
from clawline.cli.plugins import PLUGIN_COLUMNS
from clawline.cli.render import ROW_FIELDS, row_json
from clawline.cli.tasks import TASK_COLUMNS
from clawline.cli.views import SESSION_COLUMNS
from clawline.pairing.registry import PairingRegistry
from clawline.pairing.scopes import OPERATOR_SCOPES
from clawline.records.instance import InstanceRecord
from clawline.records.task import TaskRecord
from clawline.sessions.catalog import SessionCatalog
from clawline.store import open_store
from clawline.store.sqlite.store import SQLiteStore
from clawline.tasks.registry import TaskRegistry
from clawline.testing import FakeClock
from tests.acp.crafted_run import agent_command

from .helpers import START_MS, Cli, cells
from .test_channel_commands import _queue
from .test_devices import request

WIDTHS = (80, 120)
MAIN = "agent:main:main"
DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def child_key(number: int) -> str:
    """``agent:main:subagent:<uuid>``: 55 characters, as sessions_spawn makes them."""
    return f"agent:main:subagent:{uuid.UUID(int=number)}"


def at(width: int) -> dict[str, str]:
    return {"COLUMNS": str(width)}


def check_fitted(fitted: str, natural: str, width: int) -> list[str]:
    """``fitted`` is the ``natural`` table fitted into ``width`` columns: every line fits and
    ends in a non-space, each row is still one line, the headers are whole ones of the natural
    table in its order, and every cell is the natural one or a cut of it ending in ``…``.
    Returns the headers shown."""
    for line in fitted.splitlines():
        assert cell_len(line) <= width, line
        assert line == line.rstrip(), repr(line)
    whole, shown = cells(natural), cells(fitted)
    assert len(shown) == len(whole), fitted
    headers = shown[0]
    columns = [whole[0].index(header) for header in headers]
    assert columns == sorted(columns)
    for row, full in zip(shown[1:], whole[1:], strict=True):
        assert len(row) == len(headers), row
        for cell, value in zip(row, (full[i] for i in columns), strict=True):
            cut = cell.endswith("…") and value.startswith(cell[:-1]) and len(cell) <= len(value)
            assert cell == value or cut, (cell, value)
    return headers


def column_of(table: str, header: str) -> list[str]:
    rows = cells(table)
    index = rows[0].index(header)
    return [row[index] for row in rows[1:]]


# --- the seeded data: wide on purpose ---------------------------------------------------------


@pytest.fixture
def sessions(catalog: SessionCatalog, clock: FakeClock) -> list[str]:
    """main and four children with UUID keys and long labels (two of them at depth 2)."""
    catalog.patch("main", {"displayName": "Main chat", "status": "running"})
    keys = []
    for number, status in enumerate(("done", "failed", "killed", "timeout")):
        clock.advance(60_000)
        parent = MAIN if number < 2 else child_key(0)
        label = f"research the long topic number {number} with many words"
        fields = {"parentSessionKey": parent, "label": label, "status": status}
        keys.append(catalog.patch(child_key(number), fields).key)
    clock.advance(60_000)
    return keys


@pytest.fixture
def registry(db_path: Path, clock: FakeClock) -> Iterator[TaskRegistry]:
    store = SQLiteStore(db_path)
    yield TaskRegistry(store, clock=clock)
    store.close()


@pytest.fixture
def tasks(registry: TaskRegistry, clock: FakeClock) -> list[TaskRecord]:
    """Four sub-agent tasks with UUID child keys: running, failed, succeeded, running."""
    made = []
    for number in range(4):
        task = registry.create(
            runtime="subagent",
            task=f"research the thing {number}\nwith details",
            requester_session_key=MAIN,
            child_session_key=child_key(number),
            run_id=f"run-{number}",
            label=f"label {number} which is quite long indeed and goes on" if number % 2 else None,
            running=True,
        )
        if number == 1:
            task = registry.finish(task.task_id, "failed", error="model exploded")
        if number == 2:
            task = registry.finish(task.task_id, "succeeded")
        made.append(task)
        clock.advance(60_000)
    return made


def _plugins(state_dir: Path) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    config = '[plugins]\nentry_points = false\nenabled = ["tests.plugins.feature_plugin"]\n'
    (state_dir / "config.toml").write_text(config, encoding="utf-8")


def _instances(state_dir: Path) -> None:
    host = "build-worker-with-a-long-name.eu-west.example.internal"
    state_dir.mkdir(parents=True, exist_ok=True)
    store = open_store(None, default_sqlite_path=state_dir / "clawline.db")
    try:
        with store.transaction() as tx:
            for number in range(2):
                tx.instances.register(
                    InstanceRecord(
                        instance_id=f"{number:012x}",
                        host=host,
                        pid=40_000 + number,
                        started_at=START_MS - 60_000,
                        heartbeat_at=START_MS - 1_000,
                        lease_ms=15_000,
                        url=f"ws://{host}:1879{number}",
                    )
                )
    finally:
        store.close()


def _devices(db_path: Path, clock: FakeClock) -> None:
    store = SQLiteStore(db_path)
    try:
        registry = PairingRegistry(store=store, clock=clock)
        _paired, code = request(registry, *OPERATOR_SCOPES)
        registry.approve_code(code)
        request(registry, *OPERATOR_SCOPES)
        clock.advance(60_000)
    finally:
        store.close()


# --- each table at 80 and 120 columns ---------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_sessions_list_fits(clawline: Cli, sessions: list[str], width: int) -> None:
    natural = clawline.ok("sessions", "list")
    fitted = clawline.ok("sessions", "list", terminal=at(width))
    headers = check_fitted(fitted, natural, width)
    assert (
        headers
        == {
            80: ["KEY", "TITLE", "STATUS"],
            120: ["KEY", "TITLE", "STATUS", "UPDATED"],
        }[width]
    )
    assert column_of(fitted, "KEY") == column_of(natural, "KEY")  # keys whole, never split
    assert any(title.endswith("…") for title in column_of(fitted, "TITLE"))
    assert len(natural.splitlines()[1]) > 160  # the unfitted table is much wider


@pytest.mark.parametrize("width", WIDTHS)
def test_tasks_list_fits(clawline: Cli, tasks: list[TaskRecord], width: int) -> None:
    natural = clawline.ok("tasks", "list")
    fitted = clawline.ok("tasks", "list", terminal=at(width))
    headers = check_fitted(fitted, natural, width)
    assert (
        headers
        == {
            80: ["TASK ID", "STATUS", "LABEL", "CREATED"],
            120: ["TASK ID", "RUNTIME", "STATUS", "LABEL", "CREATED"],
        }[width]
    )
    assert column_of(fitted, "TASK ID") == column_of(natural, "TASK ID")


@pytest.mark.parametrize("width", WIDTHS)
def test_plugins_fit(clawline: Cli, state_dir: Path, width: int) -> None:
    _plugins(state_dir)
    natural = clawline.ok("plugins")
    fitted = clawline.ok("plugins", terminal=at(width))
    assert check_fitted(fitted, natural, width) == ["NAME", "SOURCE", "ORIGIN", "HOOKS"]
    hooks = column_of(fitted, "HOOKS")
    assert hooks[-1].startswith("register_")  # the feature plugin's, many of them
    assert hooks[-1].endswith("…")


@pytest.mark.parametrize("width", WIDTHS)
def test_instances_fit(clawline: Cli, state_dir: Path, width: int) -> None:
    _instances(state_dir)
    natural = clawline.ok("instances")
    fitted = clawline.ok("instances", terminal=at(width))
    headers = check_fitted(fitted, natural, width)
    assert headers == ["ID", "STATE", "URL", "HEARTBEAT", "RUNS", "SUBAGENTS", "ACP", "CHANNELS"]
    assert column_of(fitted, "ID") == ["000000000000", "000000000001"]
    assert all(url.startswith("ws://build-") for url in column_of(fitted, "URL"))


@pytest.mark.parametrize("width", WIDTHS)
def test_devices_list_fits(clawline: Cli, db_path: Path, clock: FakeClock, width: int) -> None:
    _devices(db_path, clock)
    natural = clawline.ok("devices", "list")
    fitted = clawline.ok("devices", "list", terminal=at(width))
    headers = check_fitted(fitted, natural, width)
    assert headers == ["DEVICE", "STATUS", "CLIENT", "GRANTED", "SINCE"]
    assert column_of(fitted, "STATUS") == ["pending", "paired"]


@pytest.mark.parametrize("width", WIDTHS)
def test_acp_ls_fits(clawline: Cli, width: int) -> None:
    """Against the crafted ACP agent (a real subprocess; its family scenario)."""

    def ls(terminal: dict[str, str]) -> str:
        result = clawline.run("acp", "ls", "--", *agent_command(), terminal=terminal)
        assert (result.exit_code, result.stderr) == (0, ""), result.output
        return result.stdout

    natural = ls({})
    fitted = ls(at(width))
    headers = check_fitted(fitted, natural, width)
    assert (
        headers
        == {
            80: ["SESSION", "TITLE", "UPDATED"],
            120: ["SESSION", "TITLE", "UPDATED", "PARENT", "CWD"],
        }[width]
    )


def test_channels_outbox_cuts_the_error_instead_of_wrapping(clawline: Cli, state_dir: Path) -> None:
    state_dir.mkdir(parents=True)
    _queue(clawline, "a", "b")
    natural = clawline.ok("channels", "outbox")
    fitted = clawline.ok("channels", "outbox", terminal=at(70))
    headers = check_fitted(fitted, natural, 70)
    assert headers == ["ID", "STATUS", "TARGET", "ATTEMPTS", "WHEN", "ERROR"]
    assert column_of(fitted, "ERROR")[-1] == "webhook…"


def test_a_very_narrow_terminal_still_gets_one_line_per_row(
    clawline: Cli, sessions: list[str]
) -> None:
    fitted = clawline.ok("sessions", "list", terminal=at(30))
    assert len(fitted.splitlines()) == 1 + 5
    assert all(cell_len(line) <= 30 and line == line.rstrip() for line in fitted.splitlines())


def test_without_a_terminal_or_columns_a_table_keeps_its_natural_width(
    clawline: Cli, sessions: list[str]
) -> None:
    natural = clawline.ok("sessions", "list")
    assert column_of(natural, "PARENT")[0] == child_key(0)  # nothing folded, nothing cut
    assert all(line == line.rstrip() for line in natural.splitlines())
    assert "\x1b" not in natural


# --- the fitting rule itself ------------------------------------------------------------------


def test_fit_widths_folds_and_cuts_in_step_order() -> None:
    columns = [
        Column("A", squeeze=3),
        Column("B", fold=1),
        Column("TEXT", squeeze=2),
        Column("C", fold=4),
    ]
    natural = [20, 10, 30, 5]
    assert fit_steps(columns) == [("fold", 1), ("cut", 2), ("cut", 0), ("fold", 3)]
    assert fit_widths(columns, natural, 200) == natural
    assert fit_widths(columns, natural, 61) == [20, None, 30, 5]  # B folded: 20+30+5+4
    assert fit_widths(columns, natural, 50) == [20, None, 21, 5]  # TEXT cut by 9
    assert fit_widths(columns, natural, 30) == [13, None, 8, 5]  # TEXT to 8, then A
    assert fit_widths(columns, natural, 20) == [8, None, 8, None]  # A to 8, C folded


def test_a_cut_never_goes_below_the_header() -> None:
    columns = [Column("A LONG HEADER", squeeze=1), Column("B")]
    assert fit_widths(columns, [40, 5], 10) == [13, 5]


# --- colours ----------------------------------------------------------------------------------

RED, GREEN, YELLOW, CYAN = "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[36m"


def test_statuses_are_coloured_on_a_terminal(
    clawline: Cli, sessions: list[str], tasks: list[TaskRecord]
) -> None:
    terminal = {"FORCE_COLOR": "1", "COLUMNS": "200"}
    listed = clawline.ok("sessions", "list", terminal=terminal)
    for colour, status in ((CYAN, "running"), (GREEN, "done"), (RED, "failed")):
        assert f"{colour}{status}" in listed
    assert f"{RED}timeout" in listed
    assert f"{YELLOW}killed" in listed
    listed = clawline.ok("tasks", "list", terminal=terminal)
    assert f"{CYAN}running" in listed
    assert f"{GREEN}succeeded" in listed
    assert f"{RED}failed" in listed
    assert "\x1b[1mTASK ID" in listed  # bold headers
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in listed.splitlines()]
    assert all(line == line.rstrip() for line in plain)


def test_no_color_and_no_terminal_mean_no_colour(
    clawline: Cli, sessions: list[str], tasks: list[TaskRecord]
) -> None:
    for command in (("sessions", "list"), ("tasks", "list")):
        no_color = clawline.ok(*command, terminal={"FORCE_COLOR": "1", "NO_COLOR": "1"})
        assert not re.search(r"\x1b\[3\dm", no_color), no_color
        assert "\x1b[1m" in no_color  # NO_COLOR is about colour: bold headers stay
        assert "\x1b" not in clawline.ok(*command)  # not a terminal: no escapes at all


# --- JSON never changes -----------------------------------------------------------------------

TERMINALS = ({"COLUMNS": "80"}, {"COLUMNS": "120", "FORCE_COLOR": "1"}, {"NO_COLOR": "1"})


def test_json_output_is_the_same_whatever_the_terminal(
    clawline: Cli, catalog: SessionCatalog, sessions: list[str], tasks: list[TaskRecord]
) -> None:
    commands = {
        ("sessions", "list"): ["sessions", "count", "nextCursor"],
        ("session", "list"): ["sessions", "count", "nextCursor"],
        ("tasks", "list"): ["tasks", "count", "nextCursor"],
        ("plugins",): ["plugins", "failures"],
        ("instances",): ["instances", "store"],
        ("devices", "list"): ["devices", "count"],
    }
    for command, envelope in commands.items():
        plain = clawline.ok(*command, "--format", "json")
        assert list(json.loads(plain)) == envelope
        for terminal in TERMINALS:
            assert clawline.ok(*command, "--format", "json", terminal=terminal) == plain
    listed = json.loads(clawline.ok("sessions", "list", "--format", "json"))["sessions"]
    assert listed == [row_json(catalog.require(row["key"])) for row in listed]
    assert all(list(row) == list(ROW_FIELDS) for row in listed)
    rows = json.loads(clawline.ok("tasks", "list", "--format", "json"))["tasks"]
    assert rows == [task.to_json() for task in reversed(tasks)]


# --- the documented rules are the real ones --------------------------------------------------

TABLES: dict[str, tuple[Column, ...]] = {
    "sessions list": SESSION_COLUMNS,
    "tasks list": TASK_COLUMNS,
    "plugins": PLUGIN_COLUMNS,
    "instances": INSTANCE_COLUMNS,
    "devices list": DEVICE_COLUMNS,
    "channels list": CHANNEL_COLUMNS,
    "channels status": STATUS_COLUMNS,
    "channels outbox": OUTBOX_COLUMNS,
    "acp ls": LS_COLUMNS,
}


def documented_tables() -> dict[str, tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("\n## Tables\n")
    section = text[start : text.index("\n## ", start + 1)]
    rows = re.findall(r"^\| `([a-z ]+)` \| (.+?) \| (.+?) \|$", section, re.M)
    return {command: (columns, steps) for command, columns, steps in rows}


def test_every_table_and_its_folding_rule_is_documented() -> None:
    documented = documented_tables()
    assert set(documented) == set(TABLES)
    for command, columns in TABLES.items():
        headers, steps = documented[command]
        assert headers == " ".join(f"`{column.header}`" for column in columns), command
        real = ", ".join(f"{kind} `{columns[index].header}`" for kind, index in fit_steps(columns))
        assert steps == real, command
