"""Idempotency keys in the store: a repeat finds its key after a restart (a new
:class:`~clawline.runtime.Runtime` on the same store), after a crash (recovery ends the keys of
lost runs) and never after the window; on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from clawline.agents.idempotency import IDEMPOTENCY_TTL_MS
from clawline.agents.run import Run, RunOutcome
from clawline.agents.run_keys import RunKeys, lose_live_keys, stored_outcome
from clawline.collab import sweepers
from clawline.collab.completion import LOST_ERROR
from clawline.config import Settings
from clawline.runtime import Runtime
from clawline.testing import FakeClock
from clawline.types import JSONObject
from tests.agents.support import BlockingRunner

MAIN = "agent:main:main"


class Lives:
    """Successive (or, for a crash, overlapping) processes on one store."""

    def __init__(self, settings: Settings, clock: FakeClock) -> None:
        self.settings = settings
        self.clock = clock
        self.opened: list[Runtime] = []

    def start(self) -> tuple[Runtime, BlockingRunner]:
        services = Runtime.open(self.settings, clock=self.clock)
        runner = BlockingRunner()
        services.runs.runner = runner
        self.opened.append(services)
        return services, runner

    async def stop(self, services: Runtime) -> None:
        await services.runs.shutdown()
        services.close()
        self.opened.remove(services)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    url = None
    if request.param == "postgres":
        schemas = request.getfixturevalue("pg_schemas")
        url = f"{request.getfixturevalue('pg_url')}?schema={schemas.new('keys')}"
    return Settings(state_dir=tmp_path / "state", store_url=url)


@pytest.fixture
async def lives(settings: Settings) -> AsyncIterator[Lives]:
    made = Lives(settings, FakeClock())
    try:
        yield made
    finally:
        for services in list(made.opened):
            runner = services.runs.runner
            if isinstance(runner, BlockingRunner):
                runner.release.set()
            await made.stop(services)


async def until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.005)


def user_run_ids(services: Runtime, key: str = MAIN) -> list[object]:
    entry = services.store.get(key)
    assert entry is not None
    return [
        event.data.get("runId")
        for event in services.store.events(entry.session_id)
        if event.data.get("role") == "user"
    ]


async def finished(services: Runtime, runner: BlockingRunner, key: str) -> RunOutcome:
    ack = await services.runs.send(session_key="main", message=f"m {key}", idempotency_key=key)
    assert ack.status == "started"
    await runner.started.wait()
    runner.release.set()
    return await ack.done


async def test_a_key_is_stored_live_with_its_message_and_ends_with_its_run(lives: Lives) -> None:
    services, runner = lives.start()
    ack = await services.runs.send(session_key="main", message="hi", idempotency_key="k")
    record = services.store.idempotency.get("k", lives.clock.now_ms())
    assert record is not None
    assert (record.run_id, record.session_key, record.accepted_at) == ("k", MAIN, ack.accepted_at)
    assert record.live
    again = await services.runs.send(session_key="main", message="hi", idempotency_key="k")
    assert (again.status, again.done) == ("in_flight", ack.done)
    await runner.started.wait()
    runner.release.set()
    outcome = await ack.done
    ended = services.store.idempotency.get("k", lives.clock.now_ms())
    assert ended is not None
    assert ended.expires_at == outcome.ended_at + IDEMPOTENCY_TTL_MS
    assert ended.outcome is not None
    assert (ended.outcome["status"], ended.outcome["text"]) == ("done", "thinking done")
    replay = await services.runs.send(session_key="main", message="hi", idempotency_key="k")
    assert (replay.status, replay.cached) == ("ok", outcome.response())
    assert user_run_ids(services) == ["k"]


async def test_after_a_restart_a_repeat_replays_the_stored_outcome(lives: Lives) -> None:
    first, runner = lives.start()
    chat = await finished(first, runner, "k")
    agent_ack = await first.runs.send(
        session_key="main", message="a", idempotency_key="k", origin="agent"
    )
    agent = await agent_ack.done
    await lives.stop(first)

    second, fresh_runner = lives.start()
    replay = await second.runs.send(session_key="main", message="m k", idempotency_key="k")
    assert (replay.status, replay.run_id, replay.message_seq) == ("ok", "k", None)
    assert replay.to_json() == chat.response()
    assert (await replay.done) == chat
    agent_replay = await second.runs.send(
        session_key="main", message="a", idempotency_key="k", origin="agent"
    )
    assert agent_replay.cached == agent.response()
    assert await second.runs.wait("k", 10_000) == agent.wait_result()  # the latest run "k"
    assert fresh_runner.contexts == []  # nothing ran again
    assert user_run_ids(second) == ["k", "k"]


async def test_a_run_lost_in_a_crash_replays_lost_after_recovery(lives: Lives) -> None:
    crashed, runner = lives.start()
    chat_ack = await crashed.runs.send(session_key="main", message="m", idempotency_key="k")
    agent_ack = await crashed.runs.send(
        session_key="agent:main:other", message="a", idempotency_key="k2", origin="agent"
    )
    await until(lambda: len(runner.contexts) == 2)  # both running (status written)

    # The crashed process is left as it is; the next one recovers the store it left.
    restarted, fresh_runner = lives.start()
    recovered = await restarted.call(restarted.recovery.recover_now)
    assert recovered.keys_lost == 2
    now = lives.clock.now_ms()
    replay = await restarted.runs.send(session_key="main", message="m", idempotency_key="k")
    assert replay.status == "error"
    assert replay.to_json() == {
        "runId": "k",
        "status": "error",
        "summary": LOST_ERROR,
        "acceptedAt": chat_ack.accepted_at,
        "startedAt": None,
        "endedAt": now,
    }
    assert await restarted.runs.wait("k", 10_000) == {
        "runId": "k",
        "status": "error",
        "endedAt": now,
        "error": LOST_ERROR,
    }
    agent_replay = await restarted.runs.send(
        session_key="agent:main:other", message="a", idempotency_key="k2", origin="agent"
    )
    lost = await agent_replay.done
    assert (lost.run_id, lost.ok, lost.summary) == ("k2", False, LOST_ERROR)
    assert fresh_runner.contexts == []
    assert user_run_ids(restarted) == ["k"]
    assert await restarted.call(restarted.recovery.recover_now) == type(recovered)([], 0, 0, 0)

    # The "dead" process's run ending late does not overwrite the outcome recovery wrote.
    runner.release.set()
    await chat_ack.done
    await agent_ack.done
    record = restarted.store.idempotency.get("k", lives.clock.now_ms())
    assert record is not None
    assert record.outcome is not None
    assert record.outcome["error"] == LOST_ERROR


async def test_a_stored_key_expires_after_the_window_and_is_pruned(lives: Lives) -> None:
    first, runner = lives.start()
    await finished(first, runner, "k")
    await lives.stop(first)
    second, fresh_runner = lives.start()
    lives.clock.advance(IDEMPOTENCY_TTL_MS - 1)
    still = await second.runs.send(session_key="main", message="m k", idempotency_key="k")
    assert still.status == "ok"
    lives.clock.advance(1)
    assert second.store.idempotency.get("k", lives.clock.now_ms()) is None
    assert second.store.idempotency.get("k", 0) is not None  # expired, not yet pruned
    assert await second.sweepers.sweep_once() == ([], 0)
    assert second.store.idempotency.get("k", 0) is None
    fresh = await second.runs.send(session_key="main", message="m k", idempotency_key="k")
    assert fresh.status == "started"
    fresh_runner.release.set()
    await fresh.done
    assert user_run_ids(second) == ["k", "k"]


async def test_a_run_aborted_while_queued_keeps_its_outcome_across_a_restart(
    lives: Lives,
) -> None:
    first, runner = lives.start()
    running = await first.runs.send(session_key="main", message="one", idempotency_key="a")
    queued = await first.runs.send(session_key="main", message="two", idempotency_key="b")
    await runner.started.wait()
    assert await first.runs.abort("main", "b") == ["b"]
    assert (await queued.done).status == "killed"
    runner.release.set()
    await running.done
    await lives.stop(first)  # waits for the stored outcome of "b"
    second, fresh_runner = lives.start()
    replay = await second.runs.send(session_key="main", message="two", idempotency_key="b")
    assert replay.status == "aborted"
    assert replay.cached is not None
    assert (replay.cached["summary"], replay.cached["startedAt"]) == ("aborted", None)
    assert fresh_runner.contexts == []


async def test_runs_of_a_message_already_written_store_no_key(lives: Lives) -> None:
    services, runner = lives.start()
    await services.call(services.catalog.patch, MAIN, {})
    data: JSONObject = {"role": "user", "content": [{"type": "text", "text": "done: x"}]}
    event = await services.call(services.catalog.append, MAIN, "message", data)
    ack = await services.runs.send(
        session_key=MAIN,
        message="done: x",
        idempotency_key="announce:1",
        origin="agent",
        existing_message_seq=event.seq,
    )
    runner.release.set()
    assert (await ack.done).status == "done"
    assert services.store.idempotency.get("agent:announce:1", 0) is None
    assert services.store.idempotency.live(None, 10) == []


async def test_a_run_that_failed_before_it_started_frees_its_key(lives: Lives) -> None:
    services, _ = lives.start()
    keys = RunKeys(services.store, lives.clock, IDEMPOTENCY_TTL_MS)
    run = Run(
        run_id="k",
        dedupe_key="k",
        session_key=MAIN,
        message="m",
        origin="chat",
        timeout_ms=1000,
        accepted_at=lives.clock.now_ms(),
    )
    with services.store.transaction() as tx:
        assert keys.claim(tx, run) is None
        held = keys.claim(tx, run)
    assert held is not None
    assert held.live
    unstarted = RunOutcome(
        run_id="k",
        session_key=MAIN,
        status="failed",
        accepted_at=run.accepted_at,
        started_at=None,
        ended_at=run.accepted_at,
        error="internal error: boom",
    )
    keys.settle_now(run, unstarted)
    assert services.store.idempotency.get("k", 0) is None
    with services.store.transaction() as tx:
        assert keys.claim(tx, run) is None  # a retry runs it


def stored_keys(services: Runtime, names: list[str], *, ended_at: int | None) -> None:
    """Keys as a previous process left them: live, or ended at ``ended_at``."""
    with services.store.transaction() as tx:
        for name in names:
            tx.idempotency.insert(
                dedupe_key=name, run_id=name, session_key=MAIN, accepted_at=1, now=1
            )
            if ended_at is not None:
                outcome: JSONObject = {"status": "done", "startedAt": 1, "endedAt": ended_at}
                tx.idempotency.finish(name, name, outcome, ended_at + IDEMPOTENCY_TTL_MS)


async def test_the_sweep_prunes_expired_keys_in_bounded_batches(
    lives: Lives, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sweepers, "KEY_PRUNE_BATCH", 2)
    monkeypatch.setattr(sweepers, "KEY_PRUNE_PASSES", 2)
    services, _ = lives.start()
    now = lives.clock.now_ms()
    stored_keys(services, [f"old{n}" for n in range(5)], ended_at=now - IDEMPOTENCY_TTL_MS)
    stored_keys(services, ["recent"], ended_at=now)
    stored_keys(services, ["live"], ended_at=None)
    assert await services.sweepers.prune_keys(now) == 4  # two passes of two
    assert await services.sweepers.prune_keys(now) == 1
    assert await services.sweepers.prune_keys(now) == 0
    left = [name for name in ("recent", "live") if services.store.idempotency.get(name, 0)]
    assert left == ["recent", "live"]
    assert all(services.store.idempotency.get(f"old{n}", 0) is None for n in range(5))


async def test_recovery_ends_every_live_key_in_batches(lives: Lives) -> None:
    services, _ = lives.start()
    stored_keys(services, [f"k{n}" for n in range(5)], ended_at=None)
    stored_keys(services, ["ended"], ended_at=lives.clock.now_ms())
    now = lives.clock.now_ms()
    ended = await services.call(
        lose_live_keys, services.store, now=now, ttl_ms=1000, error=LOST_ERROR, batch=2
    )
    assert ended == 5
    assert services.store.idempotency.live(None, 10) == []
    for n in range(5):
        record = services.store.idempotency.get(f"k{n}", now)
        assert record is not None
        assert record.expires_at == now + 1000
        outcome = stored_outcome(record)
        assert outcome is not None
        assert (outcome.status, outcome.error, outcome.started_at) == ("failed", LOST_ERROR, None)
    kept = services.store.idempotency.get("ended", now)
    assert kept is not None
    assert kept.outcome == {"status": "done", "startedAt": 1, "endedAt": now}
