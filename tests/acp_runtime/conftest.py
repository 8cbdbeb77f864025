"""Fixtures: real services (SQLite in a temporary state directory) whose ``[acp]`` section
runs the tiny agent (``tests/acp_runtime/tiny_agent.py``) as a real subprocess. Ordinary
sessions are answered by a :class:`~tests.collab.support.ScriptedRunner`.

At teardown the services are shut down; every tiny agent process the test started must be
gone by then, and every recorded ACP message must validate against the v1 schema."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import pytest

from clawline.config import Settings
from clawline.runtime import Runtime
from tests.acp_runtime.support import MAIN, Traffic, acp_config, alive, pids
from tests.collab.support import ScriptedRunner


@dataclass(frozen=True, slots=True)
class Acp:
    services: Runtime
    log: Path
    """The tiny agents' JSONL log."""
    traffic: Traffic
    runner: ScriptedRunner
    """Answers ordinary (non-ACP) sessions, e.g. the requester's turn on a completion."""


MakeAcp: TypeAlias = Callable[..., Awaitable[Acp]]


@pytest.fixture
async def make_acp(tmp_path: Path) -> AsyncIterator[MakeAcp]:
    made: list[Acp] = []

    async def make(
        *,
        env: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
        raw: Mapping[str, Any] | None = None,
        **acp: Any,
    ) -> Acp:
        number = len(made)
        log = tmp_path / f"tiny{number}.jsonl"
        config = dict(raw) if raw is not None else acp_config(log, env=env, **acp)
        config.update(extra or {})
        state = tmp_path / f"state{number}"
        state.mkdir()
        services = Runtime.open(Settings(state_dir=state, raw=config))
        runner = ScriptedRunner()
        services.runs.runner = runner
        assert services.announcer is not None  # its run-end hook exists from the start
        traffic = Traffic()
        services.acp.observers.append(traffic)
        await services.call(services.catalog.patch, MAIN, {})
        made.append(Acp(services, log, traffic, runner))
        return made[-1]

    yield make
    for acp in made:
        await acp.services.runs.shutdown()
        await acp.services.announcer.stop()
        acp.services.close()
    for acp in made:
        left = [pid for pid in pids(acp.log) if alive(pid)]
        assert not left, f"agent processes left running: {left}"
        problems = acp.traffic.problems()
        assert not problems, "\n".join(problems)


@pytest.fixture
async def acp(make_acp: MakeAcp) -> Acp:
    return await make_acp()
