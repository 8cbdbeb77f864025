"""The background task group and the virtual clock it runs on."""

from __future__ import annotations

import asyncio
import gc
import logging
import warnings

import pytest

from clawline.background import Background
from clawline.errors import StoreUnavailable
from clawline.testing import FakeClock


async def test_a_periodic_task_runs_in_virtual_time() -> None:
    clock = FakeClock()
    background = Background(clock)
    passes: list[int] = []

    async def work() -> None:
        passes.append(clock.now_ms())

    start = clock.now_ms()
    background.every(2.0, work, name="tick")
    await clock.run_for(1_999)
    assert passes == []
    await clock.run_for(1)
    assert passes == [start + 2_000]
    await clock.run_for(6_000)
    assert passes == [start + 2_000, start + 4_000, start + 6_000, start + 8_000]
    await background.close()
    assert background.tasks == []


async def test_first_after_sets_the_first_pass() -> None:
    clock = FakeClock()
    background = Background(clock)
    passes: list[int] = []

    async def work() -> None:
        passes.append(clock.now_ms())

    start = clock.now_ms()
    background.every(10.0, work, name="sweep", first_after=0)
    await clock.run_for(0)
    assert passes == [start]
    await background.close()


async def test_a_failing_pass_is_logged_once_and_the_loop_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    background = Background(clock)
    calls = 0

    async def work() -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise StoreUnavailable("the store is closed")
        if calls == 2:
            raise KeyError("bug")

    caplog.set_level(logging.WARNING, logger="clawline.background")
    background.every(1.0, work, name="flaky")
    await clock.run_for(3_000)
    assert calls == 3
    records = [(r.levelno, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert records == [
        (logging.WARNING, "flaky failed: the store is closed", False),
        (logging.ERROR, "flaky failed: 'bug'", True),
    ]
    await background.close()


async def test_close_cancels_and_awaits_every_task() -> None:
    clock = FakeClock()
    background = Background(clock)
    cleaned: list[str] = []
    started = asyncio.Event()

    async def long_job() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0)  # cleanup that itself awaits
            cleaned.append("job")

    async def noop() -> None:
        return None

    job = background.spawn(long_job(), name="job")
    loop_task = background.every(5.0, noop, name="loop")
    await started.wait()
    await background.close()
    assert job.done()
    assert loop_task.done()
    assert cleaned == ["job"]
    assert background.tasks == []


async def test_a_closed_group_starts_nothing() -> None:
    background = Background(FakeClock())
    await background.close()

    async def job() -> None:
        raise AssertionError("must not run")

    with pytest.raises(RuntimeError, match="background work is closed; late was not started"):
        background.spawn(job(), name="late")


async def test_a_spawned_task_that_raises_does_not_touch_the_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    background = Background(clock)
    passes: list[int] = []

    async def broken() -> None:
        raise ValueError("boom")

    async def work() -> None:
        passes.append(1)

    background.every(1.0, work, name="steady")
    failed = background.spawn(broken(), name="one-shot")
    await clock.run_for(2_000)
    assert failed.done()
    assert failed.exception() is None
    assert passes == [1, 1]
    assert "one-shot failed: boom" in caplog.text
    await background.close()


async def test_the_fake_clock_wakes_sleepers_in_deadline_order() -> None:
    clock = FakeClock()
    woke: list[str] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append(name)

    tasks = [
        asyncio.create_task(sleeper("late", 3)),
        asyncio.create_task(sleeper("early", 1)),
        asyncio.create_task(sleeper("middle", 2)),
    ]
    await clock.run_for(0)
    assert clock.sleepers == 3
    assert clock.next_deadline == clock.now_ms() + 1_000
    clock.advance(2_000)
    await asyncio.sleep(0)
    assert woke == ["early", "middle"]
    await clock.run_for(1_000)
    assert woke == ["early", "middle", "late"]
    await asyncio.gather(*tasks)
    with pytest.raises(ValueError, match="a clock never goes back"):
        clock.advance(-1)


async def test_work_closed_before_it_started_is_not_left_unawaited() -> None:
    background = Background(FakeClock())
    started: list[str] = []

    async def work() -> None:
        started.append("ran")

    background.every(1.0, work, name="tick", first_after=0)
    background.spawn(work(), name="once")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await background.close()  # before either task took its first step
        gc.collect()
    assert started == []
    assert background.tasks == []
    assert not [w for w in caught if "never awaited" in str(w.message)]


async def test_wait_for_runs_in_the_clocks_time() -> None:
    from clawline.clock import wait_for

    clock = FakeClock()
    never = asyncio.get_running_loop().create_future()
    waiting = asyncio.create_task(wait_for(clock, never, 30.0))
    await clock.run_for(29_999)
    assert not waiting.done()
    await clock.run_for(1)
    with pytest.raises(TimeoutError):
        await waiting
    assert never.cancelled()  # what timed out is cancelled, as with asyncio.wait_for

    soon = asyncio.get_running_loop().create_future()
    answered = asyncio.create_task(wait_for(clock, soon, 30.0))
    soon.set_result("in time")
    assert await answered == "in time"
    assert await wait_for(clock, asyncio.sleep(0, "unbounded"), None) == "unbounded"
