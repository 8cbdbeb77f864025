"""``chat.startup``: the first page of a conversation, as OpenClaw's Control UI opens one.

Two forms (OpenClaw's union of params):

- ``{sessionKey, agentId?, limit?, maxBytes?, maxChars?}``: the ``chat.history`` answer plus
  ``defaults`` (the listing defaults), ``sessionInfo`` (the session's row, ``null`` for an
  unknown session) and ``pendingInputs`` (clawline queues no input outside its runs, so always
  empty);
- ``{shortId, agentId, slugHint?, limit?, maxBytes?}``: a short chat link. clawline makes no
  short links, so it answers OpenClaw's "not found" resolution, ``{resolution: {ok: false}}``.
"""

from __future__ import annotations

from clawline.gateway.frames import GatewayError
from clawline.gateway.methods.chat import HISTORY, read_history
from clawline.gateway.methods.sessions.common import required_key, session_defaults
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
from clawline.sessions.listing_rows import RowBuilder
from clawline.types import JSON, JSONObject

methods = MethodRegistry()

_ID = P.string(min_len=1, max_len=512)
STARTUP = {
    **HISTORY,
    "sessionKey": P.string(min_len=1, max_len=HISTORY["sessionKey"].max_len),
    "agentId": P.string(min_len=1, max_len=128),
    "shortId": _ID,
    "slugHint": _ID,
}
NO_PENDING_INPUTS: JSONObject = {"items": [], "total": 0}


def _form(call: Call) -> str:
    params = call.params
    if ("sessionKey" in params) == ("shortId" in params):
        raise GatewayError("invalid chat.startup params: provide either sessionKey or shortId")
    if "shortId" in params:
        if "agentId" not in params:
            raise GatewayError("invalid chat.startup params: agentId is required")
        if "maxChars" in params:
            raise GatewayError("invalid chat.startup params: unknown key 'maxChars'")
        return "shortId"
    if "slugHint" in params:
        raise GatewayError("invalid chat.startup params: unknown key 'slugHint'")
    return "sessionKey"


@methods.method("chat.startup", scope=READ, schema=STARTUP)
async def chat_startup(call: Call) -> JSON:
    if _form(call) == "shortId":
        return {"resolution": {"ok": False}}
    key = required_key(call, "sessionKey")
    result, entry = await read_history(
        call, key, limit=call.params.get("limit"), max_bytes=call.params.get("maxBytes")
    )
    gateway = call.gateway
    info: JSON = None
    if entry is not None:
        builder = RowBuilder(gateway.store, gateway.runs.has_active_run, gateway.row_cache)
        info = await gateway.workers.run(builder.one, entry)
    return {
        **result,
        "pendingInputs": dict(NO_PENDING_INPUTS),
        "defaults": session_defaults(),
        "sessionInfo": info,
    }
