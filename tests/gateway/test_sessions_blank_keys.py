"""A blank session key never means the main session: every method that names a session refuses
``""`` and whitespace-only keys with the text ``sessions.get`` gives an empty one, and changes
nothing. Over a real socket."""

from __future__ import annotations

from typing import Any

import pytest

from clawline.testing.live_gateway import RunningGateway
from tests.gateway.test_sessions_support import MAIN, error_of, seed
from tests.gateway.wire import WireClient

BLANKS = ["", " ", "\t \n"]

REQUESTS: list[tuple[str, str, dict[str, Any]]] = [
    ("sessions.get", "key", {}),
    ("sessions.patch", "key", {"label": "hijacked"}),
    ("sessions.delete", "key", {}),
    ("sessions.reset", "key", {}),
    ("sessions.messages.subscribe", "key", {}),
    ("sessions.messages.unsubscribe", "key", {}),
    ("chat.history", "sessionKey", {}),
    ("chat.send", "sessionKey", {"message": "hi", "idempotencyKey": "blank-1"}),
    ("chat.abort", "sessionKey", {}),
    ("chat.inject", "sessionKey", {"message": "injected"}),
    ("agent", "sessionKey", {"message": "hi", "idempotencyKey": "blank-2"}),
]


@pytest.mark.parametrize(("method", "name", "extra"), REQUESTS, ids=[r[0] for r in REQUESTS])
async def test_a_blank_key_is_refused_and_changes_nothing(
    client: WireClient, gw: RunningGateway, method: str, name: str, extra: dict[str, Any]
) -> None:
    seed(gw.runtime.catalog, MAIN, label="the main one")
    before = gw.runtime.catalog.get(MAIN)
    assert before is not None
    transcript = gw.runtime.store.transcript_info(before.session_id)
    for blank in BLANKS:
        error = await error_of(client, method, {name: blank, **extra})
        assert error["code"] == "INVALID_REQUEST", blank
        expected = f"invalid {method} params: {name} must have at least 1 characters"
        assert error["message"] == expected, blank
    assert gw.runtime.catalog.get(MAIN) == before  # not patched, reset or deleted
    assert gw.runtime.store.transcript_info(before.session_id) == transcript
    assert not gw.runtime.runs.has_active_run(MAIN)
    assert client.events_named("chat") == []


async def test_the_main_session_is_still_reached_by_name(
    client: WireClient, gw: RunningGateway
) -> None:
    seed(gw.runtime.catalog, MAIN)
    for key in ("main", " main ", MAIN):
        got = await client.ok("sessions.get", {"key": key})
        assert got["key"] == MAIN
    patched = await client.ok("sessions.patch", {"key": " main ", "label": "named"})
    assert patched["key"] == MAIN
    assert patched["entry"]["label"] == "named"


async def test_preview_of_a_blank_key_is_an_error_row(
    client: WireClient, gw: RunningGateway
) -> None:
    seed(gw.runtime.catalog, MAIN)
    result = await client.ok("sessions.preview", {"keys": [" ", "main"]})
    assert [(row["key"], row["status"]) for row in result["previews"]] == [
        (" ", "error"),
        ("main", "empty"),
    ]
