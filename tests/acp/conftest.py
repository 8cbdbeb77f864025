"""Fixtures for the ACP tests: a real gateway and real ``clawline acp`` subprocesses.

- ``acp_gateway``: a gateway on ``127.0.0.1:0`` in the test's event loop (token auth with
  :data:`tests.acp.support.TOKEN`), its services reachable for seeding;
- ``acp_bridge``: ``await acp_bridge(*args)`` starts ``python -m clawline acp --url <gateway>
  --token <token> *args`` (``url=None``: without ``--url``, so the bridge finds or starts the
  gateway of its own state directory) and returns a :class:`tests.acp.support.BridgeProcess`
  whose SDK connection records every message. At teardown every bridge is stopped, must have
  exited, and all recorded traffic must validate against the ACP v1 schema.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.acp.support import TOKEN, BridgeProcess, start_bridge

BridgeFactory = Callable[..., Awaitable[BridgeProcess]]


@pytest.fixture
async def acp_gateway(tmp_path: Path) -> AsyncIterator[RunningGateway]:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    async with running_gateway(tmp_path / "gateway-state", gateway_settings=settings) as gateway:
        yield gateway


@pytest.fixture
async def acp_bridge(tmp_path: Path, acp_gateway: RunningGateway) -> AsyncIterator[BridgeFactory]:
    started: list[BridgeProcess] = []
    async with AsyncExitStack() as stack:

        async def start(
            *args: str,
            url: str | None = acp_gateway.url,
            env: Mapping[str, str] | None = None,
            cwd: Path | None = None,
            state_dir: Path | None = None,
        ) -> BridgeProcess:
            number = len(started)
            argv = ["--url", url, "--token", TOKEN, *args] if url is not None else list(args)
            state = state_dir or tmp_path / f"bridge-state-{number}"
            bridge = await stack.enter_async_context(
                start_bridge(
                    *argv,
                    env={"CLAWLINE_STATE_DIR": str(state), **(env or {})},
                    cwd=cwd or tmp_path,
                    stderr=tmp_path / f"bridge-{number}.stderr",
                )
            )
            started.append(bridge)
            return bridge

        yield start
    for bridge in started:
        problems = bridge.recorder.problems()
        assert not problems, "\n".join(problems)
