"""Gateway calls beyond the gateway's in-flight limit are queued, not refused (real bridge)."""

from __future__ import annotations

import asyncio

from clawline.acp.upstream import MAX_GATEWAY_CALLS
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway
from tests.acp.conftest import BridgeFactory
from tests.acp.support import seed

CONCURRENT_LISTS = 200


async def test_200_concurrent_lists_are_all_answered(
    acp_bridge: BridgeFactory, acp_gateway: RunningGateway
) -> None:
    # the gateway refuses a connection's requests beyond this many in flight
    assert CONCURRENT_LISTS > GatewaySettings().max_inflight_requests > MAX_GATEWAY_CALLS
    keys = [f"agent:main:queued-{n}" for n in range(20)]
    await seed(acp_gateway, [(key, {"label": key.rsplit(":", 1)[1]}) for key in keys])
    bridge = await acp_bridge()
    expected = await bridge.call("session/list", {})
    assert sorted(row["sessionId"] for row in expected["sessions"]) == sorted(keys)
    answers = await asyncio.gather(
        *(bridge.call("session/list", {}) for _ in range(CONCURRENT_LISTS))
    )
    assert answers == [expected] * CONCURRENT_LISTS
