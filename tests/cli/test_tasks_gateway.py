"""``clawline tasks …`` through a running gateway: the same output as with the store, and a
cancel that also aborts the task's live run."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawline.gateway.bus import Event
from clawline.gateway.options import GatewaySettings
from clawline.store.sqlite.store import SQLiteStore
from clawline.tasks.registry import TaskRegistry
from clawline.testing import FakeClock
from clawline.testing.gateway_thread import GatewayThread
from tests.agents.support import BlockingRunner

from .helpers import Cli
from .test_tasks import seed

TOKEN = "tasks-token-1"
CHILD = "agent:main:subagent:live"


@pytest.fixture
def gateway(state_dir: Path, clock: FakeClock) -> Iterator[GatewayThread]:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    with GatewayThread(state_dir, clock=clock, gateway_settings=settings) as running:
        yield running


@pytest.fixture
def registry(db_path: Path, clock: FakeClock, gateway: GatewayThread) -> Iterator[TaskRegistry]:
    store = SQLiteStore(db_path)
    yield TaskRegistry(store, clock=clock)
    store.close()


def remote_env(state_dir: Path, gateway: GatewayThread) -> dict[str, str]:
    return {
        "CLAWLINE_STATE_DIR": str(state_dir),
        "CLAWLINE_GATEWAY_URL": gateway.url,
        "CLAWLINE_GATEWAY_TOKEN": TOKEN,
    }


def test_the_same_output_as_the_store(
    clawline: Cli,
    registry: TaskRegistry,
    clock: FakeClock,
    gateway: GatewayThread,
    state_dir: Path,
) -> None:
    a, b, _c, d = seed(registry, clock)
    env = remote_env(state_dir, gateway)
    commands = [
        ["tasks", "list"],
        ["tasks", "list", "--format", "json"],
        ["tasks", "list", "--status", "running", "--format", "json"],
        ["tasks", "list", "--runtime", "acp"],
        ["tasks", "list", "--owner", "agent:main:other", "--format", "json"],
        ["tasks", "list", "--limit", "1", "--all", "--format", "json"],
        ["tasks", "show", a.task_id],
        ["tasks", "show", "run-b", "--format", "json"],
        ["tasks", "show", "main", "--format", "json"],
        ["tasks", "show", "nope"],
        ["tasks", "cancel", b.task_id],
        ["tasks", "cancel", "nope"],
    ]
    for command in commands:
        local = clawline.run(*command)
        remote = clawline.run(*command, env=env)
        assert (remote.exit_code, remote.stdout, remote.stderr) == (
            local.exit_code,
            local.stdout,
            local.stderr,
        ), command
    # A first page hints at the next one the same way (cursors differ: each is signed).
    remote_page = clawline.run("tasks", "list", "--limit", "2", env=env)
    assert remote_page.stdout == clawline.run("tasks", "list", "--limit", "2").stdout
    assert remote_page.stderr.startswith("more tasks: repeat with --cursor ")
    cancelled = clawline.run("tasks", "cancel", d.task_id, env=env)
    assert (cancelled.exit_code, cancelled.stdout, cancelled.stderr) == (
        0,
        f"cancelled {d.task_id}\n",
        "",
    )


def test_cancel_through_the_gateway_aborts_the_run(
    clawline: Cli,
    registry: TaskRegistry,
    gateway: GatewayThread,
    state_dir: Path,
) -> None:
    services = gateway.running.runtime
    runner = BlockingRunner()
    services.runs.runner = runner
    published: list[Event] = []
    gateway.running.gateway.bus.tap(published.append)
    gateway.run(
        lambda: services.runs.send(session_key=CHILD, message="work", idempotency_key="r-live")
    )
    deadline = time.monotonic() + 5
    while not runner.started.is_set():
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.01)
    task = registry.create(
        runtime="subagent",
        task="work",
        requester_session_key="agent:main:main",
        child_session_key=CHILD,
        run_id="r-live",
        running=True,
    )
    result = clawline.run("tasks", "cancel", task.task_id, env=remote_env(state_dir, gateway))
    assert (result.exit_code, result.stdout, result.stderr) == (
        0,
        f"cancelled {task.task_id}\naborted run r-live\n",
        "",
    )
    assert not services.runs.has_active_run(CHILD)
    assert registry.require(task.task_id).status == "cancelled"
    ends = [
        e for e in published if e.name == "sessions.changed" and e.payload.get("phase") == "end"
    ]
    assert [e.payload.get("status") for e in ends] == ["killed"]
