"""``clawline acp ls`` against clawline's own bridge: ``python -m clawline acp ls`` as a real
process, which starts ``python -m clawline acp`` on the same state directory."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from clawline.cli.root import CliState, cli
from clawline.gateway.options import GatewaySettings
from clawline.sessions.catalog import SessionCatalog
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing import FakeClock
from clawline.testing.gateway_thread import GatewayThread
from tests.cli.helpers import START_MS, seed_family

from .crafted_run import AGENT, child_pids

TOKEN = "acp-ls-token-0123456789"
MAIN, A, B, C = (
    f"agent:main:{name}" for name in ("main", "subagent:a", "subagent:b", "subagent:c")
)


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    store = SQLiteStore(state / "clawline.db")
    try:
        seed_family(SessionCatalog(store, clock=FakeClock(START_MS)), FakeClock(START_MS))
    finally:
        store.close()
    return state


@pytest.fixture
def env() -> dict[str, str]:
    drop = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS")
    return {k: v for k, v in os.environ.items() if not k.startswith("CLAWLINE_") and k not in drop}


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text in (entry / "cmdline").read_text(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def clawline(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clawline", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_tree_of_the_bridge(state_dir: Path, env: dict[str, str]) -> None:
    result = clawline(env, "--state-dir", str(state_dir), "acp", "ls", "--tree")
    assert result.returncode == 0, result.stderr
    # guides and the session id of each line (titles are the bridge's derived titles)
    shape = [re.sub(r"^([│├└─ ]*\S+).*$", r"\1", line) for line in result.stdout.splitlines()]
    assert shape in (
        [MAIN, f"├── {A}", f"│   └── {C}", f"└── {B}"],
        [MAIN, f"├── {B}", f"└── {A}", f"    └── {C}"],
    )
    assert processes_mentioning(str(state_dir)) == []


def test_json_of_the_bridge(state_dir: Path, env: dict[str, str]) -> None:
    result = clawline(env, "--state-dir", str(state_dir), "acp", "ls", "--format", "json")
    assert result.returncode == 0, result.stderr
    sessions = json.loads(result.stdout)["sessions"]
    parents = {session["sessionId"]: session["parent"] for session in sessions}
    assert parents == {MAIN: None, A: MAIN, B: MAIN, C: A}
    assert all(session["_meta"]["sessionKey"] == session["sessionId"] for session in sessions)
    assert processes_mentioning(str(state_dir)) == []


def test_group_url_reaches_the_bridge_and_agent_commands_run(
    state_dir: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """``clawline acp ls -- AGENT…`` through the registered group; no process outlives it."""
    before = child_pids()
    log = tmp_path / "group.jsonl"
    crafted_env = {**env, "CRAFTED_SCENARIO": "family", "CRAFTED_LOG": str(log)}
    result = CliRunner().invoke(
        cli,
        ["acp", "ls", "--format", "json", "--", sys.executable, str(AGENT)],
        env=crafted_env,
        obj=CliState(),
    )
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["sessions"]) == 12
    refused = CliRunner().invoke(
        cli, ["acp", "--url", "ws://127.0.0.1:9", "ls", "--", "agent"], obj=CliState()
    )
    assert refused.exit_code == 2
    assert child_pids() == before


def test_group_url_and_token_reach_the_bridge(
    state_dir: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """``clawline acp --url U --token T ls``: the bridge connects to that gateway (token auth)."""
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    bridge_state = CliState(state_dir=tmp_path / "bridge-state", env=env)
    with GatewayThread(state_dir, gateway_settings=settings) as gateway:
        args = ["acp", "--url", gateway.url, "--token", TOKEN, "ls", "--format", "json"]
        listed = CliRunner().invoke(cli, args, obj=bridge_state)
        wrong = [*args[:4], "wrong-token", *args[5:]]
        refused = CliRunner().invoke(cli, wrong, obj=bridge_state)
    assert listed.exit_code == 0, listed.output
    parents = {row["sessionId"]: row["parent"] for row in json.loads(listed.stdout)["sessions"]}
    assert parents == {MAIN: None, A: MAIN, B: MAIN, C: A}
    assert refused.exit_code == 1
    assert refused.stderr.startswith("error: ")
    assert processes_mentioning(str(tmp_path / "bridge-state")) == []
