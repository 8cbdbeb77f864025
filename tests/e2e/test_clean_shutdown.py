"""Ctrl-C on a gateway with sub-agent runs in flight: the process stops cleanly and leaves no
task ``running`` — every cut-off child ends ``lost: gateway stopped``, its session ``failed``
(as recovery ends a lost child), its sub-agent record ended and its completion queued for the
next start, which delivers it.

The gateway is a real process (``python -m clawline gateway run``) with the offline model; the
store is read directly between its lives.
"""

from __future__ import annotations

import signal
from pathlib import Path

from clawline.client.connection import GatewayClient
from tests.e2e.support import all_tasks, clean_env, gateway_process, opened_store, until

TOKEN = "clean-shutdown-token-0123"
PARENT = "agent:main:main"
CHILDREN = 3
CONFIG = """
[agents]
echo_delay_ms = 0
"""
STOPPED = "lost: gateway stopped"


async def _running(client: GatewayClient) -> bool:
    listed = await client.request("tasks.list", {"limit": 100})
    assert isinstance(listed, dict)
    tasks = listed["tasks"]
    return len(tasks) == CHILDREN and all(task["status"] == "running" for task in tasks)


async def test_ctrl_c_mid_flight_leaves_no_task_running(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").write_text(CONFIG, encoding="utf-8")
    env = clean_env(state, CLAWLINE_GATEWAY_TOKEN=TOKEN)

    async with gateway_process(env, tmp_path / "life1.log", "--log-level", "info") as life1:
        client = await GatewayClient.connect(life1.url, token=TOKEN)
        try:
            params = {
                "sessionKey": PARENT,
                "message": f"spawn {CHILDREN} x: sleep 60000",
                "idempotencyKey": "wave",
            }
            ack = await client.request("chat.send", params)
            assert isinstance(ack, dict)
            assert ack["status"] == "started"
            await until(lambda: _running(client), timeout=20, what="the children running")
        finally:
            await client.close()
        life1.process.send_signal(signal.SIGINT)
        assert await life1.process.wait() == 0, life1.log()
    log = (tmp_path / "life1.log").read_text(encoding="utf-8")
    assert "Traceback" not in log
    assert "shutdown:" in log  # what the stop ended is logged

    with opened_store(state) as store:
        tasks = all_tasks(store)
        runs = store.runs.for_requester(PARENT)
        assert len(tasks) == len(runs) == CHILDREN
        assert [(t.status, t.error) for t in tasks] == [("lost", STOPPED)] * CHILDREN
        assert all(not run.active for run in runs)
        for run in runs:
            child = store.get(run.child_session_key)
            assert child is not None
            assert (child.status, child.extra.get("abortedLastRun")) == ("failed", True)
            row = store.inbox.by_run(run.run_id)
            assert row is not None
            assert row.pending  # queued for the next start

    async with gateway_process(env, tmp_path / "life2.log") as life2:
        client = await GatewayClient.connect(life2.url, token=TOKEN)
        try:

            async def delivered() -> bool:
                listed = await client.request("tasks.list", {"limit": 100})
                assert isinstance(listed, dict)
                return all(t["deliveryStatus"] == "delivered" for t in listed["tasks"])

            await until(delivered, timeout=20, what="the completions delivered")
        finally:
            await client.close()
        assert await life2.terminate() == 0, life2.log()
    with opened_store(state) as store:
        assert [t.status for t in all_tasks(store)] == ["lost"] * CHILDREN  # not recovered twice
