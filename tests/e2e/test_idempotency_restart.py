"""A gateway killed (SIGKILL) and started again answers a retried idempotency key from the store
(docs/gateway-chat.md, "Idempotency"; docs/security.md, "Idempotency across restarts").

The gateway runs as a real process with the offline model. In its first life one ``chat.send``
finishes and another (``sleep 30000``) and an ``agent`` run are still running when the process
is killed. In the second life the same keys are sent again: the finished run is replayed (same
runId, its final response), the cut-off ones answer with the lost outcome recovery gave them —
not ``started`` — and nothing runs a second time.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from clawline.client.client_errors import GatewayRequestError
from clawline.client.connection import GatewayClient
from tests.e2e.support import clean_env, gateway_process, message_events, opened_store, until

TOKEN = "idempotency-restart-token-0123"
CONFIG = """
[agents]
echo_delay_ms = 0
"""
SLOW = "agent:main:main"
QUICK = "agent:main:quick"
AGENT = "agent:main:agentrun"
LOST_ERROR = "lost: gateway restarted"
SLOW_SEND = {"sessionKey": SLOW, "message": "sleep 30000", "idempotencyKey": "slow-key"}
QUICK_SEND = {"sessionKey": QUICK, "message": "hello there", "idempotencyKey": "quick-key"}
AGENT_SEND = {"sessionKey": AGENT, "message": "sleep 30000", "idempotencyKey": "agent-key"}


def _runs_of(store: Any, key: str, run_id: str) -> list[str]:
    """The roles of the messages of ``key``'s transcript that carry ``run_id``."""
    return [data["role"] for _, data in message_events(store, key) if data.get("runId") == run_id]


async def _running(client: GatewayClient, *keys: str) -> bool:
    listed = await client.request("sessions.list", {"limit": 100})
    assert isinstance(listed, dict)
    status = {row["key"]: row.get("status") for row in listed["sessions"]}
    return all(status.get(key) == "running" for key in keys)


async def test_a_retry_after_sigkill_and_restart_is_answered_from_the_store(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").write_text(CONFIG, encoding="utf-8")
    env = clean_env(state, CLAWLINE_GATEWAY_TOKEN=TOKEN)
    args = ("--log-level", "warning")

    # --- first life: one run finishes, two are cut off by the kill -------------------------
    async with gateway_process(env, tmp_path / "life1.log", *args) as life1:
        client = await GatewayClient.connect(life1.url, token=TOKEN)
        try:
            quick = await client.request("chat.send", QUICK_SEND)
            assert quick == {"runId": "quick-key", "status": "started"}
            waited = await client.request("agent.wait", {"runId": "quick-key", "timeoutMs": 10_000})
            assert isinstance(waited, dict)
            assert waited["status"] == "ok"
            final = await client.request("chat.send", QUICK_SEND)
            assert isinstance(final, dict)
            assert (final["runId"], final["status"]) == ("quick-key", "ok")
            slow = await client.request("chat.send", SLOW_SEND)
            assert slow == {"runId": "slow-key", "status": "started"}
            agent_ack = await client.request("agent", AGENT_SEND)
            assert isinstance(agent_ack, dict)
            assert agent_ack["status"] == "accepted"
            await until(lambda: _running(client, SLOW, AGENT), timeout=10, what="running runs")
        finally:
            await client.close()
        assert await life1.kill() == -signal.SIGKILL

    with opened_store(state) as store:
        at_kill = store.idempotency.get("slow-key", 0)
        assert at_kill is not None
        assert at_kill.live  # the crash left it without an outcome

    # --- second life: the same keys again ---------------------------------------------------
    async with gateway_process(env, tmp_path / "life2.log", *args) as life2:
        client = await GatewayClient.connect(life2.url, token=TOKEN)
        try:
            replay = await client.request("chat.send", QUICK_SEND)
            assert replay == final  # same runId, its final response
            lost = await client.request("chat.send", SLOW_SEND)
            assert isinstance(lost, dict)
            assert (lost["runId"], lost["status"], lost["summary"]) == (
                "slow-key",
                "error",
                LOST_ERROR,
            )
            assert lost["acceptedAt"] == at_kill.accepted_at
            assert await client.request("agent.wait", {"runId": "slow-key"}) == {
                "runId": "slow-key",
                "status": "error",
                "endedAt": lost["endedAt"],
                "error": LOST_ERROR,
            }
            with pytest.raises(GatewayRequestError) as failed:
                await client.request_final("agent", AGENT_SEND, timeout=10)
            assert (failed.value.code, failed.value.message) == ("UNAVAILABLE", LOST_ERROR)
            assert failed.value.payload == {
                "runId": "agent-key",
                "status": "error",
                "summary": LOST_ERROR,
            }
            assert not await _running(client, SLOW)
        finally:
            await client.close()
        assert await life2.terminate() == 0, life2.log()

    with opened_store(state) as store:
        # exactly one user message per run id and no second run of the cut-off ones
        assert _runs_of(store, SLOW, "slow-key") == ["user"]
        assert _runs_of(store, AGENT, "agent-key") == ["user"]
        assert _runs_of(store, QUICK, "quick-key") == ["user", "assistant"]
        for key in (SLOW, AGENT):
            entry = store.get(key)
            assert entry is not None
            assert entry.status == "failed"  # recovery's, not a new run's
        record = store.idempotency.get("slow-key", 0)
        assert record is not None
        assert record.outcome is not None
        assert (record.outcome["status"], record.outcome["error"]) == ("failed", LOST_ERROR)
