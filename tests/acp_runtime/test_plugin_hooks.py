"""The plugins' spawn hooks see ACP spawns too: ``subagent_spawning`` may refuse one (nothing is
created, no agent process starts), ``subagent_spawned`` hears an accepted one."""

from __future__ import annotations

from pathlib import Path

from tests.acp_runtime.conftest import MakeAcp
from tests.acp_runtime.support import MAIN, acp_config, pids, spawn
from tests.plugins.sample_plugins import recorder

SAMPLES = "tests.plugins.sample_plugins"


async def test_a_plugin_refuses_an_acp_spawn_and_hears_an_accepted_one(
    make_acp: MakeAcp, tmp_path: Path
) -> None:
    recorder.reset()
    log = tmp_path / "tiny-hooks.jsonl"
    raw = acp_config(log)
    raw["plugins"] = {
        "enabled": [f"{SAMPLES}:refuser", f"{SAMPLES}:recorder"],
        "entry_points": False,
    }
    acp = await make_acp(raw=raw)
    services = acp.services

    refused = await spawn(services, task="forbidden work", agentId="tiny")
    assert refused["status"] == "error"
    assert refused["error"] == f"no spawning from {MAIN}"
    assert services.store.children(MAIN) == []
    assert pids(log) == []
    assert recorder.of("subagent_spawned") == []

    accepted = await spawn(services, task="allowed work", agentId="tiny")
    assert accepted["status"] == "accepted"
    [(spawning, _)] = [
        (event, ctx)
        for event, ctx in recorder.of("subagent_spawning")
        if event["task"] == "allowed work"
    ]
    assert spawning["runtime"] == "acp"
    [(spawned, ctx)] = recorder.of("subagent_spawned")
    assert spawned["childSessionKey"] == accepted["childSessionKey"]
    assert (spawned["runtime"], spawned["agentId"], spawned["runId"]) == (
        "acp",
        "tiny",
        accepted["runId"],
    )
    assert ctx.session_key == accepted["childSessionKey"]  # spawned: the child's context
