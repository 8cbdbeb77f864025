"""``web.family``: a session's family for the web chat, from ACP (docs/web.md).

The answer is the family operation's result as-is (ClawX's ``getAcpSessionFamily``):
``{success: true, current, children}`` or ``{success: false, current: null, children: [],
error}``. A missing or non-``agent:`` key is the operation's own failure
(``Invalid ACP session family payload``), answered without starting the ACP bridge.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, cast

from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.keys import MAX_KEY_LENGTH
from clawline.pairing.scopes import READ
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.gateway.app import Gateway
    from clawline.web.acp_family import BridgeTarget, WebFamily

methods = MethodRegistry()

FAMILY = {"sessionKey": P.string(max_len=MAX_KEY_LENGTH)}


_families: weakref.WeakKeyDictionary[Gateway, WebFamily] = weakref.WeakKeyDictionary()


def family_service(gateway: Gateway) -> WebFamily:
    """The gateway's :class:`~clawline.web.acp_family.WebFamily`, made on first use and closed on
    gateway shutdown."""
    # imported on first use: the family loader brings the ACP SDK (pydantic), which a gateway
    # that never serves the web chat should not pay for at start-up
    from clawline.acp_client.agent_calls import AcpClientError
    from clawline.web.acp_family import STOPPED, WebFamily, bridge_target

    family = _families.get(gateway)
    if family is None:
        gateway_ref = weakref.ref(gateway)  # the family must not keep its gateway alive

        def target() -> BridgeTarget:
            current = gateway_ref()
            if current is None:
                raise AcpClientError(STOPPED)
            settings = current.settings
            return bridge_target(
                url=current.url,
                state_dir=current.state_dir,
                token=settings.token if settings.auth == "token" else None,
            )

        family = WebFamily(target=target)
        _families[gateway] = family
        gateway.on_shutdown(family.close)
    return family


@methods.method("web.family", scope=READ, schema=FAMILY)
async def web_family(call: Call) -> JSON:
    result = await family_service(call.connection.gateway).family(call.params.get("sessionKey"))
    return cast(JSONObject, result)  # a TypedDict of JSON values
