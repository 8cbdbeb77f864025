"""One ACP client stack: the family loader's link (also ``clawline acp ls``) and the acp spawn
runtime's child agents start their agents and initialise them the same way — one protocol
version, one ``initialize`` (the runtime adds only ``clientInfo``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import acp
from acp.connection import StreamDirection, StreamEvent

from clawline.acp_client.agent_calls import PROTOCOL_VERSION, initialize_params
from clawline.acp_client.agent_process import AgentCommand
from clawline.acp_client.link import spawned_agent
from clawline.collab.acp.callbacks import RuntimeClient
from clawline.collab.acp.child_agent import CLIENT_INFO, AgentProcess
from tests.acp_runtime.support import TINY, alive


def test_the_protocol_version_is_the_sdks() -> None:
    assert PROTOCOL_VERSION == acp.PROTOCOL_VERSION


async def test_the_runtime_and_the_family_loader_send_one_initialize(tmp_path: Path) -> None:
    sent: list[dict[str, Any]] = []

    def observe(event: StreamEvent) -> None:
        message = event.message
        if event.direction is StreamDirection.OUTGOING and message.get("method") == "initialize":
            sent.append(message["params"])

    env = {"TINY_LOG": str(tmp_path / "tiny.jsonl")}
    async with spawned_agent(
        sys.executable, str(TINY), env=env, observers=[observe], require_load=False
    ) as link:
        await link.ready()
        link_pid = link.process.pid if link.process is not None else None
    child = AgentProcess(
        AgentCommand([sys.executable, str(TINY)], env, name="tiny"),
        RuntimeClient("deny-all"),
        grace_s=0.3,
        observers=[observe],
    )
    try:
        await child.start(cwd=str(tmp_path), resume_session_id=None, timeout_s=30)
    finally:
        await child.close()

    assert sent == [initialize_params(), initialize_params(CLIENT_INFO)]
    assert {params["protocolVersion"] for params in sent} == {PROTOCOL_VERSION}
    assert link_pid is not None
    assert not alive(link_pid)
    assert child.pid is not None
    assert not alive(child.pid)
