"""``clawline instances`` lists the store's gateway instances and what each answers for."""

from __future__ import annotations

import json
from dataclasses import replace

from clawline.records.collab import SubagentRun
from clawline.records.instance import InstanceRecord
from clawline.store import open_store
from tests.cli.helpers import START_MS, Cli

LEASE = 15_000


def _instance(instance_id: str, *, beat_ago_ms: int, **changes: object) -> InstanceRecord:
    record = InstanceRecord(
        instance_id=instance_id,
        host="host-a",
        pid=4242,
        started_at=START_MS - 60_000,
        heartbeat_at=START_MS - beat_ago_ms,
        lease_ms=LEASE,
        url=f"ws://127.0.0.1:1879{len(instance_id)}",
    )
    return replace(record, **changes)  # type: ignore[arg-type]


def _seed(cli: Cli) -> None:
    cli.state_dir.mkdir(parents=True)
    store = open_store(None, default_sqlite_path=cli.state_dir / "clawline.db")
    try:
        with store.transaction() as tx:
            tx.instances.register(_instance("live", beat_ago_ms=1_200))
            tx.instances.register(_instance("lapsed", beat_ago_ms=LEASE + 1))
            tx.instances.register(_instance("gone", beat_ago_ms=90_000, stopped_at=START_MS - 1))
        store.instance_id = "live"
        with store.transaction() as tx:
            tx.run_owners.add("r1", "agent:main:a", START_MS)
            tx.run_owners.add("r2", "agent:main:b", START_MS)
            tx.claims.take("channel", "matrix", START_MS)
            tx.claims.take("channel", "telegram", START_MS)
            tx.claims.take("acp", "agent:codex:acp:1", START_MS)
            tx.runs.insert(
                SubagentRun(
                    run_id="r2",
                    child_session_key="agent:main:subagent:x",
                    requester_session_key="agent:main:main",
                    task="t",
                    created_at=START_MS,
                )
            )
    finally:
        store.close()


def test_instances_lists_the_running_ones_with_what_they_answer_for(clawline: Cli) -> None:
    _seed(clawline)
    listed = json.loads(clawline.ok("instances", "--format", "json"))["instances"]
    # oldest first (both started at once: by id)
    assert [(row["instanceId"], row["state"]) for row in listed] == [
        ("lapsed", "lapsed"),
        ("live", "live"),
    ]
    assert (listed[0]["runs"], listed[0]["subagents"]) == (0, 0)
    assert (listed[1]["runs"], listed[1]["subagents"]) == (2, 1)
    assert (listed[1]["acpChildren"], listed[1]["channels"]) == (1, ["matrix", "telegram"])
    assert (listed[0]["acpChildren"], listed[0]["channels"]) == (0, [])
    assert listed[1]["heartbeatAt"] == START_MS - 1_200
    table = clawline.ok("instances")
    assert "1.2s ago" in table
    assert "ws://127.0.0.1:18794" in table
    assert "gone" not in table
    assert "matrix,telegram" in table


def test_instances_all_adds_the_stopped_ones(clawline: Cli) -> None:
    _seed(clawline)
    listed = json.loads(clawline.ok("instances", "--all", "--format", "json"))["instances"]
    assert sorted((row["instanceId"], row["state"]) for row in listed) == [
        ("gone", "stopped"),
        ("lapsed", "lapsed"),
        ("live", "live"),
    ]
