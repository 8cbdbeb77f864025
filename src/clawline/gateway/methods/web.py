"""``web.family``: a session's family for the web chat, from ACP (docs/web.md).

The answer is the family operation's result as-is (ClawX's ``getAcpSessionFamily``):
``{success: true, current, children}`` or ``{success: false, current: null, children: [],
error}``. A missing or non-``agent:`` key is the operation's own failure
(``Invalid ACP session family payload``), answered without starting the ACP bridge.
"""

from __future__ import annotations

from typing import cast

from clawline.gateway.handshake import READ
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.keys import MAX_KEY_LENGTH
from clawline.types import JSON, JSONObject

__all__ = ["FAMILY", "methods"]

methods = MethodRegistry()

FAMILY = {"sessionKey": P.string(max_len=MAX_KEY_LENGTH)}


@methods.method("web.family", scope=READ, schema=FAMILY)
async def web_family(call: Call) -> JSON:
    # imported on first use: the family loader brings the ACP SDK (pydantic), which a gateway
    # that never serves the web chat should not pay for at start-up
    from clawline.web.family import family_service

    result = await family_service(call.connection.gateway).family(call.params.get("sessionKey"))
    return cast(JSONObject, result)  # a TypedDict of JSON values
