"""The command line against the PostgreSQL backend, chosen with ``--store-url``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .helpers import Cli


@pytest.mark.postgres
def test_sessions_commands_over_postgresql(clawline: Cli, pg_url: str, pg_schemas: Any) -> None:
    schema = pg_schemas.new("cli")
    url = f"{pg_url}?schema={schema}"

    def run(*args: str) -> str:
        return clawline.ok("--store-url", url, *args)

    run("sessions", "create", "main", "--display-name", "Main")
    run("sessions", "create", "subagent:a", "--parent", "main", "--label", "kid")
    run("sessions", "create", "subagent:b", "--parent", "subagent:a")
    run("sessions", "patch", "subagent:b", "--set", 'meta={"z": 1, "a": {"y": 2, "b": 3}}')
    run("sessions", "delete", "subagent:a", "--yes")
    assert run("sessions", "tree", "subagent:b").splitlines() == [
        'root agent:main:main ── "Main"  [-]',
        "└── agent:main:subagent:a  (not in catalog)",
        "    └── agent:main:subagent:b  [-]  ◀",
    ]
    listed = run("sessions", "list", "--format", "json", "--limit", "1")
    document = json.loads(listed)
    assert document["sessions"][0]["key"] == "agent:main:subagent:b"
    # jsonb reorders object keys; the output is key-sorted all the same
    assert (
        '"meta": {\n        "a": {\n          "b": 3,\n          "y": 2\n        },\n        "z": 1'
        in listed
    )
    rest = json.loads(
        run("sessions", "list", "--format", "json", "--cursor", document["nextCursor"])
    )
    assert [row["key"] for row in rest["sessions"]] == ["agent:main:main"]
    result = clawline.run("--store-url", url, "sessions", "patch", "subagent:b", "--parent", "main")
    assert (result.exit_code, result.stderr) == (
        2,
        "error: parentSessionKey cannot be changed once set\n",
    )
    assert not clawline.state_dir.exists()
