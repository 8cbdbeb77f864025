"""The installed ``clawline`` script and ``python -m clawline``, run as real processes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from clawline import __version__

SCRIPT = Path(sys.executable).with_name("clawline")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CLAWLINE_")}
    return {**clean, "CLAWLINE_STATE_DIR": str(tmp_path / "state")}


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_console_script_builds_lists_and_refuses(env: dict[str, str], tmp_path: Path) -> None:
    assert SCRIPT.is_file(), f"console script missing: {SCRIPT}"
    created = run(env, "sessions", "create", "main", "--display-name", "Main")
    assert (created.returncode, created.stderr) == (0, "")
    child = run(env, "sessions", "create", "subagent:a", "--parent", "main", "--label", "kid")
    assert child.returncode == 0
    listed = run(env, "sessions", "list", "--format", "json")
    assert listed.returncode == 0
    document = json.loads(listed.stdout)
    assert [row["key"] for row in document["sessions"]] == [
        "agent:main:subagent:a",
        "agent:main:main",
    ]
    tree = run(env, "sessions", "tree", "subagent:a")
    assert tree.stdout.splitlines() == [
        'root agent:main:main ── "Main"  [-]',
        '└── agent:main:subagent:a ── "kid"  [-]  ◀',
    ]
    db = tmp_path / "state" / "clawline.db"
    with sqlite3.connect(db) as conn:
        before = conn.execute("SELECT * FROM sessions ORDER BY key").fetchall()
    refused = run(env, "sessions", "patch", "subagent:a", "--parent", "agent:main:other")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == "error: parentSessionKey cannot be changed once set\n"
    missing = run(env, "sessions", "delete", "nope", "--yes")
    assert (missing.returncode, missing.stderr) == (
        1,
        "error: session not found: agent:main:nope\n",
    )
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT * FROM sessions ORDER BY key").fetchall() == before


def test_state_dir_option_overrides_the_environment(env: dict[str, str], tmp_path: Path) -> None:
    other = tmp_path / "other"
    assert run(env, "--state-dir", str(other), "sessions", "create", "ops").returncode == 0
    assert (other / "clawline.db").is_file()
    assert not (tmp_path / "state").exists()


def test_store_url_option_names_the_database(env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "elsewhere.db"
    result = run(env, "--store-url", f"sqlite:///{db}", "sessions", "create", "ops")
    assert result.returncode == 0
    assert db.is_file()
    listed = run(env, "--store-url", f"sqlite:///{db}", "sessions", "list", "--format", "json")
    assert json.loads(listed.stdout)["count"] == 1
    assert json.loads(run(env, "sessions", "list", "--format", "json").stdout)["count"] == 0


def test_python_dash_m_and_version(env: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "clawline", "--version"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, f"clawline, version {__version__}\n")
    helped = subprocess.run(
        [sys.executable, "-m", "clawline", "sessions", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert helped.returncode == 0
    for command in ("create", "delete", "list", "patch", "show", "tree"):
        assert f"  {command} " in helped.stdout
    assert helped.stdout.startswith("Usage: clawline sessions")
