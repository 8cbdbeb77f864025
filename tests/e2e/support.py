"""Helpers of the end-to-end tests: waiting for a condition, a gateway as a real process, and
reading the store the gateway left behind."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from clawline.records.task import TaskRecord
from clawline.store import open_store
from clawline.store.base import Store
from clawline.store.collab import TaskQuery

__all__ = [
    "GatewayProcess",
    "all_tasks",
    "clean_env",
    "gateway_process",
    "message_events",
    "opened_store",
    "until",
]

T = TypeVar("T")

READY = re.compile(r"clawline gateway listening on (ws://127\.0\.0\.1:\d+)\n")
READY_TIMEOUT_S = 20.0


async def until(
    check: Callable[[], Awaitable[T | None]],
    *,
    timeout: float,
    interval: float = 0.05,
    what: str = "the condition",
) -> T:
    """Call ``check`` until it returns something other than ``None``/``False``; return that.
    Fails the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value is not None and value is not False:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(interval)


@dataclass(slots=True)
class GatewayProcess:
    """``python -m clawline gateway run`` on ``127.0.0.1:0``, its URL from the ready line."""

    process: asyncio.subprocess.Process
    url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    async def kill(self) -> int:
        """SIGKILL: the crash."""
        self.process.kill()
        return await asyncio.wait_for(self.process.wait(), 10)

    async def terminate(self) -> int:
        """SIGTERM: a graceful stop (exit code 0 expected)."""
        self.process.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(self.process.wait(), 15)


@contextlib.asynccontextmanager
async def gateway_process(
    env: Mapping[str, str], log_path: Path, *args: str
) -> AsyncIterator[GatewayProcess]:
    """Start a gateway process; it is killed on exit if it is still running. Its log (stderr)
    goes to ``log_path`` (a file, so a chatty gateway never blocks on a full pipe)."""
    with log_path.open("ab") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "clawline",
            "gateway",
            "run",
            "--port",
            "0",
            *args,
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
        )
    try:
        assert process.stdout is not None
        try:
            line = (await asyncio.wait_for(process.stdout.readline(), READY_TIMEOUT_S)).decode()
        except TimeoutError:
            line = ""
        match = READY.fullmatch(line)
        if match is None:
            log_text = log_path.read_text(encoding="utf-8", errors="replace")
            raise AssertionError(f"no ready line (got {line!r}); log:\n{log_text}")
        yield GatewayProcess(process, match.group(1), log_path)
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await asyncio.wait_for(process.wait(), 10)


def clean_env(state_dir: Path, **extra: str) -> dict[str, str]:
    """The environment without the caller's ``CLAWLINE_*`` variables, with a state dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWLINE_")}
    env["CLAWLINE_STATE_DIR"] = str(state_dir)
    env.update(extra)
    return env


@contextlib.contextmanager
def opened_store(state_dir: Path) -> Iterator[Store]:
    """The SQLite store of a state directory (its gateway must not be running)."""
    store = open_store(None, default_sqlite_path=state_dir / "clawline.db")
    try:
        yield store
    finally:
        store.close()


def all_tasks(store: Store) -> list[TaskRecord]:
    tasks: list[TaskRecord] = []
    after = None
    while True:
        page = store.tasks.page(TaskQuery(), after, 500)
        tasks.extend(page.tasks)
        if page.next is None:
            return tasks
        after = page.next


def message_events(store: Store, session_key: str) -> list[tuple[int, Mapping[str, Any]]]:
    """``(seq, data)`` of every message in a session's transcript, in order."""
    entry = store.get(session_key)
    assert entry is not None, session_key
    out: list[tuple[int, Mapping[str, Any]]] = []
    after = 0
    while True:
        events = store.events(entry.session_id, after_seq=after, limit=1000)
        if not events:
            return out
        out.extend((event.seq, event.data) for event in events if event.type == "message")
        after = events[-1].seq
