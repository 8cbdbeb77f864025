"""Pieces the ``sessions.*`` method modules share: listing defaults, webchat refusals, the
required session key, the main session check and model resolution."""

from __future__ import annotations

from clawline import keys
from clawline.gateway.frames import GatewayError
from clawline.gateway.registry import Call
from clawline.records.session import SessionEntry
from clawline.types import JSONObject

DEFAULT_MODEL_PROVIDER = "offline"
DEFAULT_MODEL = "offline"
CONTROL_UI_CLIENT_ID = "openclaw-control-ui"


def session_defaults() -> JSONObject:
    """``defaults`` of a listing (the same values as ``hello-ok.snapshot.sessionDefaults``)."""
    return {"modelProvider": DEFAULT_MODEL_PROVIDER, "model": DEFAULT_MODEL, "contextTokens": None}


def refuse_webchat(call: Call, message: str) -> None:
    """Webchat clients other than the Control UI may not change sessions directly."""
    info = call.connection.info
    if (
        info is not None
        and info.client_mode == "webchat"
        and info.client_id != CONTROL_UI_CLIENT_ID
    ):
        raise GatewayError(message)


def refuse_blank_key(call: Call, name: str = "key") -> None:
    """Refuse a session key that is empty after trimming, with the text the params check gives
    an empty one. The catalog reads a blank key as the main session; a request that names a
    session must name it, not fall through to the main one by mistake."""
    value = call.params.get(name)
    if isinstance(value, str) and not value.strip():
        raise GatewayError(f"invalid {call.method} params: {name} must have at least 1 characters")


def required_key(call: Call, name: str = "key") -> str:
    """The canonical session key of a request's ``name`` param, refused when blank."""
    refuse_blank_key(call, name)
    return call.gateway.catalog.canonical(call.params[name])


def is_main_key(call: Call, key: str) -> bool:
    """Whether ``key`` is some agent's main session (``agent:<id>:<mainKey>``)."""
    parsed = keys.parse_agent_session_key(key)
    return parsed is not None and parsed.rest == call.gateway.catalog.main_key


def resolved_model(entry: SessionEntry) -> JSONObject:
    """``{modelProvider, model}`` in effect for a session.

    A ``model`` override of the form ``provider/model`` names its provider; otherwise the
    entry's ``modelProvider`` (or the default provider) applies.
    """
    model = entry.extra.get("model")
    provider = entry.extra.get("modelProvider")
    if isinstance(model, str) and "/" in model:
        prefix, _, name = model.partition("/")
        if prefix and name:
            return {"modelProvider": prefix, "model": name}
    return {
        "modelProvider": provider if isinstance(provider, str) else DEFAULT_MODEL_PROVIDER,
        "model": model if isinstance(model, str) else DEFAULT_MODEL,
    }
