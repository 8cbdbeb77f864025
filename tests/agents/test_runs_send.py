"""RunManager.send: the user message, the run's end state, idempotency and queueing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawline.agents import idempotency
from clawline.agents.echo import EchoRunner
from clawline.agents.run_manager import RunManager
from clawline.config import Settings
from clawline.errors import InvalidField, InvalidSessionKey
from clawline.runtime import Runtime
from clawline.sessions.catalog import CatalogTransaction
from clawline.testing import FakeClock, drained
from clawline.testing.wire import WireRecorder
from tests.agents.support import BlockingRunner

MAIN = "agent:main:main"


def texts(services: Runtime, key: str) -> list[tuple[str, str]]:
    entry = services.store.get(key)
    assert entry is not None
    out = []
    for event in services.store.events(entry.session_id):
        content = event.data["content"]
        assert isinstance(content, list)
        out.append((str(event.data["role"]), str(content[0]["text"])))
    return out


async def test_send_appends_the_user_message_before_it_returns(services: Runtime) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    ack = await services.runs.send(session_key="main", message="hello", idempotency_key="k1")
    assert (ack.run_id, ack.status, ack.message_seq, ack.cached) == ("k1", "started", 1, None)
    assert ack.session_key == MAIN
    assert texts(services, MAIN) == [("user", "hello")]
    assert services.runs.has_active_run(MAIN)
    runner.release.set()
    outcome = await ack.done
    assert outcome.status == "done"
    assert texts(services, MAIN) == [("user", "hello"), ("assistant", "thinking done")]


async def test_a_finished_run_writes_its_end_to_the_entry(services: Runtime) -> None:
    ack = await services.runs.send(session_key="main", message="hi there", idempotency_key="k")
    outcome = await ack.done
    assert (outcome.status, outcome.text) == ("done", "echo: hi there")
    entry = services.store.get(MAIN)
    assert entry is not None
    assert entry.status == "done"
    assert entry.started_at is not None
    assert entry.ended_at is not None
    assert entry.started_at <= entry.ended_at
    assert entry.extra["runtimeMs"] == entry.ended_at - entry.started_at
    assert entry.extra["abortedLastRun"] is False
    assert not services.runs.has_active_run(MAIN)


async def test_a_key_without_an_entry_gets_one(services: Runtime, events: WireRecorder) -> None:
    key = "agent:main:acp:1234"
    assert services.store.get(key) is None
    ack = await services.runs.send(session_key=key, message="first", idempotency_key="k")
    await ack.done
    assert services.store.get(key) is not None
    await events.settled()
    reasons = [e.payload.get("reason") for e in events if e.name == "sessions.changed"]
    assert reasons[0] == "create"


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"session_key": "agent:x"}, InvalidSessionKey, "agent:<agentId>:<rest>"),
        ({"message": "   "}, InvalidField, "invalid message: empty"),
        ({"message": 42}, InvalidField, "invalid message: must be a string"),
        ({"idempotency_key": ""}, InvalidField, "invalid idempotencyKey"),
        ({"timeout_ms": -1}, InvalidField, "invalid timeoutMs"),
        ({"attachments": [{"content": "!!!"}]}, InvalidField, "not base64"),
        ({"attachments": [{"content": "QQ==", "name": "x"}]}, InvalidField, "unknown key 'name'"),
        ({"attachments": "QQ=="}, InvalidField, "must be an array"),
    ],
)
async def test_bad_input_is_refused_and_writes_nothing(
    services: Runtime, kwargs: dict[str, object], error: type[Exception], text: str
) -> None:
    params: dict[str, object] = {
        "session_key": "agent:main:fresh",
        "message": "hi",
        "idempotency_key": "k",
        **kwargs,
    }
    with pytest.raises(error, match=text):
        await services.runs.send(**params)  # type: ignore[arg-type]
    assert services.store.get("agent:main:fresh") is None
    assert services.runs.active_runs() == []


async def test_attachments_over_five_million_bytes_are_refused(services: Runtime) -> None:
    big = "A" * (5_000_004 * 4 // 3)
    with pytest.raises(InvalidField, match=r"attachments too large: \d+ bytes"):
        await services.runs.send(
            session_key="main",
            message="",
            idempotency_key="k",
            attachments=[{"type": "image", "mimeType": "image/png", "content": big}],
        )
    assert services.store.get(MAIN) is None


async def test_attachments_become_content_blocks(services: Runtime) -> None:
    ack = await services.runs.send(
        session_key="main",
        message="look",
        idempotency_key="k",
        attachments=[
            {"mimeType": "image/png", "fileName": "a.png", "content": "data:image/png;base64,QQ=="},
            {"type": "file", "content": "QkI="},
        ],
    )
    await ack.done
    entry = services.store.get(MAIN)
    assert entry is not None
    first = services.store.events(entry.session_id)[0]
    assert first.data["content"] == [
        {"type": "text", "text": "look"},
        {"type": "image", "data": "QQ==", "mimeType": "image/png", "fileName": "a.png"},
        {"type": "file", "data": "QkI="},
    ]


async def test_same_key_is_in_flight_while_active_then_replayed(services: Runtime) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    first = await services.runs.send(session_key="main", message="m", idempotency_key="dup")
    again = await services.runs.send(session_key="main", message="other", idempotency_key="dup")
    assert (again.run_id, again.status, again.message_seq) == ("dup", "in_flight", None)
    assert again.done is first.done
    runner.release.set()
    await first.done
    replay = await services.runs.send(session_key="main", message="m", idempotency_key="dup")
    assert replay.status == "ok"
    assert replay.cached is not None
    assert replay.cached["status"] == "ok"
    assert replay.cached["runId"] == "dup"
    assert replay.to_json() == replay.cached
    assert texts(services, MAIN) == [("user", "m"), ("assistant", "thinking done")]


async def test_agent_origin_dedupes_under_its_own_prefix(services: Runtime) -> None:
    chat = await services.runs.send(session_key="main", message="a", idempotency_key="same")
    await chat.done
    agent = await services.runs.send(
        session_key="main", message="b", idempotency_key="same", origin="agent"
    )
    assert agent.status == "started"
    await agent.done
    repeat = await services.runs.send(
        session_key="main", message="b", idempotency_key="same", origin="agent"
    )
    assert repeat.status == "ok"
    assert repeat.cached is not None
    assert repeat.cached["result"]["text"] == "echo: b"  # type: ignore[index,call-overload]


async def test_cached_outcomes_expire_after_the_ttl(faked: Runtime, clock: FakeClock) -> None:
    ack = await faked.runs.send(session_key="main", message="m", idempotency_key="k")
    await ack.done
    clock.advance(idempotency.IDEMPOTENCY_TTL_MS - 1)
    still = await faked.runs.send(session_key="main", message="m", idempotency_key="k")
    assert still.status == "ok"
    clock.advance(1)
    fresh = await faked.runs.send(session_key="main", message="m", idempotency_key="k")
    assert fresh.status == "started"
    await fresh.done
    assert [role for role, _ in texts(faked, MAIN)] == ["user", "assistant"] * 2


async def test_a_key_dropped_from_the_memory_front_is_replayed_from_the_store(
    services: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(idempotency, "IDEMPOTENCY_MAX_ENTRIES", 2)
    default = services.runs  # a second manager over the same parts, with the same runner
    runs = RunManager(
        catalog=services.catalog,
        store=services.store,
        workers=services.workers,
        clock=services.clock,
        events=services.events,
        settings=default.settings,
        config=default.config,
        providers=default.providers,
        tools=default.tools,
        runner=default.runner,
    )
    try:
        for key in ("a", "b", "c"):
            await (await runs.send(session_key="main", message=key, idempotency_key=key)).done
        before = texts(services, MAIN)
        replay = await runs.send(session_key="main", message="a", idempotency_key="a")
        assert (replay.status, replay.run_id, replay.message_seq) == ("ok", "a", None)
        assert replay.cached is not None
        assert replay.cached["result"]["text"] == "echo: a"  # type: ignore[index,call-overload]
        assert (await replay.done).text == "echo: a"
        assert (
            await runs.send(session_key="main", message="c", idempotency_key="c")
        ).status == "ok"
        assert texts(services, MAIN) == before  # nothing ran again
    finally:
        await runs.shutdown()


async def test_a_second_send_runs_after_the_first(services: Runtime) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    first = await services.runs.send(session_key="main", message="one", idempotency_key="1")
    await runner.started.wait()
    second = await services.runs.send(session_key="main", message="two", idempotency_key="2")
    assert (second.status, second.message_seq) == ("started", 2)
    await drained(services)
    assert len(runner.contexts) == 1
    runner.release.set()
    one, two = await first.done, await second.done
    assert one.ended_at <= (two.started_at or 0)
    assert [ctx.message for ctx in runner.contexts] == ["one", "two"]
    assert texts(services, MAIN) == [
        ("user", "one"),
        ("user", "two"),
        ("assistant", "thinking done"),
        ("assistant", "thinking done"),
    ]


async def test_different_sessions_run_concurrently(services: Runtime) -> None:
    services.runs.runner = EchoRunner(delay_ms=60)
    acks = [
        await services.runs.send(session_key=key, message="a b c", idempotency_key=key)
        for key in ("s1", "s2")
    ]
    assert services.runs.has_active_run("agent:main:s1")
    assert services.runs.has_active_run("agent:main:s2")
    first, second = [await ack.done for ack in acks]
    assert first.started_at is not None
    assert second.started_at is not None
    assert second.started_at < first.ended_at


async def test_busy_sessions_is_a_snapshot_of_the_sessions_with_runs(services: Runtime) -> None:
    runner = BlockingRunner()
    services.runs.runner = runner
    assert services.runs.busy_sessions() == frozenset()
    first = await services.runs.send(session_key="main", message="one", idempotency_key="b-1")
    await runner.started.wait()
    queued = await services.runs.send(session_key="main", message="two", idempotency_key="b-2")
    nested = await services.runs.send(
        session_key="side", message="n", idempotency_key="b-3", bypass_queue=True
    )
    busy = services.runs.busy_sessions()
    assert busy == {MAIN, "agent:main:side"}  # a nested lane counts for its session
    runner.release.set()
    for ack in (first, queued, nested):
        await ack.done
    assert busy == {MAIN, "agent:main:side"}  # taken then, unchanged since
    assert services.runs.busy_sessions() == frozenset()
    assert not services.runs.has_active_run(MAIN)


async def test_a_run_refused_after_its_start_was_reserved_gives_its_lane_slot_back(
    tmp_path: Path,
) -> None:
    # One slot on the subagent lane: a run that can start at once reserves it before its
    # accepting transaction; that transaction fails here, so the slot must go back, else
    # the next run on the lane would wait for ever.
    raw = {"agents": {"defaults": {"subagents": {"maxConcurrent": 1}}}}
    runtime = Runtime.open(Settings(state_dir=tmp_path, raw=raw))

    def refuse(work: CatalogTransaction) -> None:
        raise InvalidField("refused by the test")

    try:
        with pytest.raises(InvalidField):
            await runtime.runs.send(
                session_key="agent:main:subagent:one",
                message="m",
                idempotency_key="refused",
                origin="agent",
                lane="subagent",
                prepare=refuse,
            )
        assert runtime.store.get("agent:main:subagent:one") is None  # nothing written
        ack = await runtime.runs.send(
            session_key="agent:main:subagent:two",
            message="n",
            idempotency_key="next",
            origin="agent",
            lane="subagent",
        )
        outcome = await asyncio.wait_for(ack.done, timeout=10)
        assert (outcome.status, outcome.text) == ("done", "echo: n")
    finally:
        await runtime.runs.shutdown()
        runtime.close()
