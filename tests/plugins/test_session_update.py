"""``session.update`` over real sockets: who receives it, its shape, its order, and replay
after a sequence number."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clawline.config import Settings
from tests.gateway.wire import WireClient
from tests.plugins.plugin_support import TOKEN, connected, plugin_gateway, run_to_end

MAIN = "agent:main:main"


def _updates(client: WireClient, key: str = MAIN) -> list[dict[str, Any]]:
    return [f for f in client.events_named("session.update") if f["payload"]["sessionKey"] == key]


async def _settle(*clients: WireClient) -> None:
    """A round trip per client: a response is queued behind every event published before it,
    so afterwards each client has read all of them."""
    for client in clients:
        await client.ok("health")


async def test_subscribers_of_the_session_receive_its_updates(tmp_path: Path) -> None:
    async with (
        plugin_gateway(Settings(state_dir=tmp_path / "state")) as gw,
        connected(gw) as watcher,
        connected(gw) as other,
        connected(gw) as everything,
        connected(gw) as bystander,
    ):
        fresh = await WireClient.open(gw.url)
        hello = await fresh.connect(token=TOKEN)
        await fresh.close()
        assert "session.update" in hello["payload"]["features"]["events"]
        await watcher.ok("sessions.messages.subscribe", {"key": "main"})
        await other.ok("sessions.messages.subscribe", {"key": "elsewhere"})
        await everything.ok("sessions.subscribe", {})
        done = await run_to_end(bystander, "main", "hello there", "run-1")
        assert done["status"] == "ok"
        await _settle(watcher, other, everything, bystander)

        frames = _updates(watcher)
        payloads = [f["payload"] for f in frames]
        *deltas, completed = payloads
        assert deltas, "the offline model streams its reply in deltas"
        assert all(
            set(p) == {"sessionId", "sessionKey", "turnId", "runId", "delta", "event"}
            for p in deltas
        )
        assert {(p["sessionId"], p["turnId"], p["runId"], p["event"]) for p in deltas} == {
            (MAIN, "run-1", "run-1", "delta")
        }
        assert "".join(p["delta"] for p in deltas) == "echo: hello there"
        assert completed == {
            "sessionId": MAIN,
            "sessionKey": MAIN,
            "turnId": "run-1",
            "runId": "run-1",
            "delta": "",
            "event": "completed",
            "status": "done",
        }
        seqs = [f["seq"] for f in frames]
        assert seqs == sorted(seqs)
        assert len(set(seqs)) == len(seqs)

        assert [f["payload"] for f in _updates(everything)] == payloads
        assert other.events_named("session.update") == []
        assert bystander.events_named("session.update") == []


async def test_a_failed_run_completes_with_its_status(tmp_path: Path) -> None:
    async with (
        plugin_gateway(Settings(state_dir=tmp_path / "state")) as gw,
        connected(gw) as watcher,
    ):
        await watcher.ok("sessions.messages.subscribe", {"key": "main"})
        done = await run_to_end(watcher, "main", "fail: broken", "run-x")
        assert done["status"] == "error"
        await _settle(watcher)
        completed = [
            f["payload"] for f in _updates(watcher) if f["payload"]["event"] == "completed"
        ]
        assert [(p["turnId"], p["status"]) for p in completed] == [("run-x", "failed")]


async def test_updates_are_replayed_after_a_sequence_number(tmp_path: Path) -> None:
    async with (
        plugin_gateway(Settings(state_dir=tmp_path / "state")) as gw,
        connected(gw) as live,
    ):
        await live.ok("sessions.messages.subscribe", {"key": "main"})
        await run_to_end(live, "main", "first reply", "run-1")
        await run_to_end(live, "main", "second reply", "run-2")
        await _settle(live)
        live_frames = _updates(live)
        boot_id = gw.gateway.bus.boot_id
        # Everything after the first run's completion: the second run's updates.
        cut = next(
            f["seq"]
            for f in live_frames
            if f["payload"]["event"] == "completed" and f["payload"]["turnId"] == "run-1"
        )
        expected = [f for f in live_frames if f["seq"] > cut]
        assert {f["payload"]["turnId"] for f in expected} == {"run-2"}

        async with connected(gw) as late:
            answer = await late.ok(
                "sessions.messages.subscribe", {"key": "main", "afterSeq": cut, "bootId": boot_id}
            )
            assert answer["replayed"] >= len(expected)
            assert _updates(late) == expected

        async with connected(gw) as again:
            await again.ok("sessions.messages.subscribe", {"key": "main"})
            replay = await again.ok("events.replay", {"afterSeq": cut, "bootId": boot_id})
            assert replay["bootId"] == boot_id
            assert _updates(again) == expected

        async with connected(gw) as unsubscribed:
            await unsubscribed.ok("events.replay", {"afterSeq": cut})
            assert _updates(unsubscribed) == []
