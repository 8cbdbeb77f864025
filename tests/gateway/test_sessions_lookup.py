"""``sessions.resolve`` and ``sessions.preview`` over a real socket."""

from __future__ import annotations

from typing import Any

import pytest

from clawline.testing.live_gateway import RunningGateway
from tests.gateway.conftest import TOKEN
from tests.gateway.test_sessions_support import MAIN, Opener, error_of, seed, sub_key
from tests.gateway.wire import WireClient


@pytest.fixture
def family(gw: RunningGateway) -> dict[str, str]:
    """main → child → grandchild; an unrelated root with its own child; labels and a shared
    session id."""
    catalog = gw.runtime.catalog
    seed(catalog, MAIN, label="home")
    seed(catalog, sub_key(1), spawnedBy=MAIN, label="worker")
    seed(catalog, sub_key(2), spawnedBy=sub_key(1), label="deep")
    seed(catalog, "agent:ops:main", label="home")
    seed(catalog, sub_key(3, "ops"), spawnedBy="agent:ops:main", label="worker")
    seed(catalog, "global", label="everyone")
    seed(catalog, "agent:main:twin-a", sessionId="shared-id")
    seed(catalog, "agent:main:twin-b", sessionId="shared-id")
    return {"child": sub_key(1), "grandchild": sub_key(2), "ops_child": sub_key(3, "ops")}


async def resolved(client: WireClient, params: dict[str, Any]) -> str:
    payload = await client.ok("sessions.resolve", params)
    assert payload["ok"] is True
    key: str = payload["key"]
    return key


async def test_resolve_by_key_session_id_and_label(
    client: WireClient, gw: RunningGateway, family: dict[str, str]
) -> None:
    assert await resolved(client, {"key": "main"}) == MAIN
    assert await resolved(client, {"key": family["child"].upper()}) == family["child"]
    assert await resolved(client, {"key": "global"}) == "global"
    child = gw.runtime.catalog.get(family["child"])
    assert child is not None
    assert await resolved(client, {"sessionId": child.session_id}) == family["child"]
    assert await resolved(client, {"label": " deep "}) == family["grandchild"]
    assert await resolved(client, {"label": "home", "agentId": "ops"}) == "agent:ops:main"
    assert await resolved(client, {"label": "worker", "agentId": "main"}) == family["child"]
    assert await resolved(client, {"label": "everyone", "includeGlobal": True}) == "global"
    assert await resolved(client, {"key": "", "label": "deep"}) == family["grandchild"]


async def test_resolve_with_spawned_by_looks_inside_that_tree_only(
    client: WireClient, family: dict[str, str]
) -> None:
    assert await resolved(client, {"label": "worker", "spawnedBy": MAIN}) == family["child"]
    assert (
        await resolved(client, {"label": "worker", "spawnedBy": "agent:ops:main"})
        == family["ops_child"]
    )
    assert (
        await resolved(client, {"key": family["grandchild"], "spawnedBy": MAIN})
        == family["grandchild"]
    )
    outside = await error_of(
        client, "sessions.resolve", {"key": family["ops_child"], "spawnedBy": MAIN}
    )
    assert outside["message"] == f"No session found: {family['ops_child']}"
    itself = await error_of(client, "sessions.resolve", {"key": MAIN, "spawnedBy": MAIN})
    assert itself["message"] == f"No session found: {MAIN}"
    below = await error_of(
        client, "sessions.resolve", {"label": "home", "spawnedBy": family["child"]}
    )
    assert below["message"] == "No session found with label: home"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"key": "main", "label": "home"},
            "Provide either key, sessionId, or label (not multiple)",
        ),
        (
            {"sessionId": "x", "label": "home"},
            "Provide either key, sessionId, or label (not multiple)",
        ),
        ({}, "Either key, sessionId, or label is required"),
        ({"key": "  ", "agentId": "main"}, "Either key, sessionId, or label is required"),
        ({"key": "agent:main:nope"}, "No session found: agent:main:nope"),
        ({"sessionId": "no-such-id"}, "No session found: no-such-id"),
        (
            {"sessionId": "shared-id"},
            "Multiple sessions found for sessionId: shared-id"
            " (agent:main:twin-b, agent:main:twin-a)",
        ),
        ({"label": "nobody"}, "No session found with label: nobody"),
        (
            {"label": "home"},
            "Multiple sessions found with label: home (agent:ops:main, agent:main:main)",
        ),
        ({"label": "everyone"}, "No session found with label: everyone"),
        ({"key": "agent:ops:main", "agentId": "main"}, "No session found: agent:ops:main"),
        ({"key": "main", "extra": 1}, "invalid sessions.resolve params: unknown key 'extra'"),
    ],
)
async def test_resolve_errors(
    client: WireClient, family: dict[str, str], params: dict[str, Any], message: str
) -> None:
    error = await error_of(client, "sessions.resolve", params)
    missing = message.startswith("No session found")
    details = (
        {"errorType": "NotFound", "errorClass": "SessionNotFound"}
        if missing
        else {"errorType": "InvalidInput", "errorClass": "GatewayError"}
    )
    assert error == {"code": "INVALID_REQUEST", "message": message, "details": details}


async def test_preview_returns_the_last_messages_of_each_key(
    client: WireClient, gw: RunningGateway
) -> None:
    catalog = gw.runtime.catalog
    seed(catalog, "agent:main:talk")
    seed(catalog, "agent:main:quiet")
    lines = [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("toolResult", "tool output"),
        ("system", "note"),
        ("narrator", "odd role"),
        ("user", "last " + "word " * 100),
    ]
    for role, text in lines:
        catalog.append("agent:main:talk", "message", {"role": role, "content": text})
    catalog.append("agent:main:talk", "run.lifecycle", {"phase": "end"})
    payload = await client.ok(
        "sessions.preview",
        {
            "keys": ["agent:main:talk", "quiet", "agent:main:ghost", "agent::bad"],
            "limit": 5,
            "maxChars": 20,
        },
    )
    assert isinstance(payload["ts"], int)
    talk, quiet, ghost, bad = payload["previews"]
    assert talk["key"] == "agent:main:talk"
    assert talk["status"] == "ok"
    assert [(item["role"], item["text"]) for item in talk["items"]] == [
        ("assistant", "first answer"),
        ("tool", "tool output"),
        ("system", "note"),
        ("other", "odd role"),
        ("user", "last word word word…"),
    ]
    assert all(len(item["text"]) <= 20 for item in talk["items"])
    assert quiet == {"key": "quiet", "status": "empty", "items": []}
    assert ghost == {"key": "agent:main:ghost", "status": "missing", "items": []}
    assert bad == {"key": "agent::bad", "status": "error", "items": []}
    default = await client.ok("sessions.preview", {"keys": ["agent:main:talk"]})
    assert len(default["previews"][0]["items"]) == 6
    assert len(default["previews"][0]["items"][-1]["text"]) == 240


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "invalid sessions.preview params: keys is required"),
        ({"keys": []}, "invalid sessions.preview params: keys must have at least 1 item"),
        ({"keys": ["k"] * 65}, "invalid sessions.preview params: keys must have at most 64 items"),
        (
            {"keys": ["k"], "maxChars": 19},
            "invalid sessions.preview params: maxChars must be >= 20",
        ),
        ({"keys": ["k"], "limit": 0}, "invalid sessions.preview params: limit must be >= 1"),
        ({"keys": [1]}, "invalid sessions.preview params: keys[0] must be a string"),
    ],
)
async def test_preview_param_errors(
    client: WireClient, params: dict[str, Any], message: str
) -> None:
    error = await error_of(client, "sessions.preview", params)
    assert error == {
        "code": "INVALID_REQUEST",
        "message": message,
        "details": {"errorType": "InvalidInput", "errorClass": "GatewayError"},
    }


SESSION_METHODS: dict[str, dict[str, Any]] = {
    "sessions.list": {},
    "sessions.resolve": {"key": "main"},
    "sessions.preview": {"keys": ["main"]},
    "sessions.subscribe": {},
    "sessions.unsubscribe": {},
    "sessions.messages.subscribe": {"key": "main"},
    "sessions.messages.unsubscribe": {"key": "main"},
    "sessions.create": {},
    "sessions.patch": {"key": "agent:main:x"},
    "sessions.delete": {"key": "agent:main:x"},
    "sessions.reset": {"key": "agent:main:x"},
}


async def test_every_session_method_is_advertised_and_has_a_closed_schema(
    wire: Opener, gw: RunningGateway
) -> None:
    client = await wire()
    hello = await client.connect(token=TOKEN)
    assert set(SESSION_METHODS) <= set(hello["payload"]["features"]["methods"])
    for method, params in SESSION_METHODS.items():
        error = await error_of(client, method, {**params, "bogus": 1})
        assert error == {
            "code": "INVALID_REQUEST",
            "message": f"invalid {method} params: unknown key 'bogus'",
            "details": {"errorType": "InvalidInput", "errorClass": "GatewayError"},
        }
    page = await client.ok("sessions.list", {})
    assert page["count"] == 0


async def test_get_returns_entry_and_row(
    client: WireClient, gw: RunningGateway, family: dict[str, str]
) -> None:
    payload = await client.ok("sessions.get", {"key": family["child"]})
    assert payload["key"] == family["child"]
    assert payload["entry"]["spawnedBy"] == MAIN
    assert payload["session"]["key"] == family["child"]
    assert payload["session"]["lineage"] == {
        "parent": MAIN,
        "path": f"/{MAIN}/{family['child']}",
        "depth": 1,
    }
    assert payload["session"]["childSessions"] == [family["grandchild"]]


async def test_get_unknown_key_and_error_type_detail(client: WireClient) -> None:
    frame = await client.call("sessions.get", {"key": "agent:main:nothing"})
    assert frame["ok"] is False
    assert frame["error"]["message"] == "No session found: agent:main:nothing"
    assert frame["error"]["details"] == {"errorType": "NotFound", "errorClass": "SessionNotFound"}
    bad = await client.call("sessions.get", {"key": "agent:Bad Id:x"})
    assert bad["error"]["code"] == "INVALID_REQUEST"
    assert bad["error"]["details"] == {
        "errorType": "InvalidInput",
        "errorClass": "InvalidSessionKey",
    }
