"""The lineage projection and the payload rules of the family operation (pure)."""

from __future__ import annotations

import logging
import random
import time
from collections import OrderedDict
from collections.abc import Mapping
from datetime import timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clawline.acp_client.family_loader import (
    INVALID_PAYLOAD,
    get_acp_session_family,
    get_session_family,
    is_native_subagent,
    member_of,
    parse_parent,
    project_family,
)
from clawline.acp_client.link import AgentFeatures

K = "agent:main:main"
SUB = "agent:main:subagent:"


def info(session_id: str, updated_at: Any = None, title: Any = None, meta: Any = None) -> Any:
    row: dict[str, Any] = {"sessionId": session_id, "cwd": "/w"}
    if updated_at is not None:
        row["updatedAt"] = updated_at
    if title is not None:
        row["title"] = title
    if meta is not None:
        row["_meta"] = meta
    return row


def child(name: str, updated_at: Any = None, parent: str = K) -> Any:
    return info(SUB + name, updated_at, meta={"parentSessionId": parent})


def keys(rows: list[Any], key: str = K) -> list[str]:
    return [member["sessionKey"] for member in project_family(rows, key)["children"]]


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        (None, None),
        ([K], None),
        ("agent:main:main", None),
        ({}, None),
        ({"parentSessionId": K, "spawnedBy": "agent:other:main"}, K),
        ({"spawnedBy": K}, K),
        ({"parentSessionId": 42, "spawnedBy": K}, K),
        ({"parentSessionId": "   ", "spawnedBy": K}, K),
        ({"parentSessionId": "", "spawnedBy": K}, K),
        ({"parentSessionId": "\ufeff\u3000", "spawnedBy": K}, K),
        ({"parentSessionId": SUB + "x", "spawnedBy": K}, K),
        ({"parentSessionId": None, "spawnedBy": None}, None),
        ({"parentSessionId": SUB + "x", "spawnedBy": SUB + "x"}, None),
        ({"parentSessionId": ["a"], "spawnedBy": {"k": K}}, None),
        ({"parentSessionId": "  " + K + " "}, "  " + K + " "),
        ({"parentSessionId": " " + SUB + "x"}, " " + SUB + "x"),
        ({"parentSessionId": "\x1c"}, "\x1c"),
    ],
)
def test_parent_parse(meta: Any, expected: str | None) -> None:
    row = info(SUB + "x")
    if meta is not None:
        row["_meta"] = meta
    assert parse_parent(row) == expected


@pytest.mark.parametrize(
    ("session_id", "native"),
    [
        (SUB + "a", True),
        ("agent:ops:subagent:7f3", True),
        ("agent:main:acp:x", False),
        ("agent:main:subagent:a:b", False),
        ("agent::subagent:x", False),
        ("agent:main:subagent:", False),
        ("agent:main:main", False),
        ("agents:main:subagent:x", False),
        ("agent:main:Subagent:x", False),
        ("x:agent:main:subagent", False),
    ],
)
def test_native_subagent_ids(session_id: str, native: bool) -> None:
    assert is_native_subagent(session_id) is native


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("  Review  ", "Review"),
        ("   ", SUB + "a"),
        ("", SUB + "a"),
        (7, SUB + "a"),
        (None, SUB + "a"),
    ],
)
def test_member_title(title: Any, expected: str) -> None:
    assert member_of(info(SUB + "a", title=title))["title"] == expected


def test_member_fields() -> None:
    row = info(SUB + "a", "2026-01-01T00:00:00Z", "A", {"spawnedBy": SUB + "p"})
    assert member_of(row) == {
        "sessionKey": SUB + "a",
        "title": "A",
        "updatedAt": "2026-01-01T00:00:00Z",
        "parentSessionKey": SUB + "p",
    }
    assert member_of(info(SUB + "a", 1767225600000))["updatedAt"] is None


def test_direct_native_children_only_and_first_occurrence_wins() -> None:
    rows = [
        info(K, title="Main"),
        child("a", "2026-01-01T10:00:00Z"),
        child("grand", "2026-01-01T11:00:00Z", parent=SUB + "a"),
        info("agent:main:acp:x", meta={"parentSessionId": K}),
        info(SUB + "a:b", meta={"parentSessionId": K}),
        child("a", "2030-01-01T00:00:00Z", parent="agent:other:main"),
        info(K, title="Second main"),
        child("b", "2026-01-01T09:00:00Z", parent="agent:other:main"),
        child("b", "2026-01-01T12:00:00Z"),
    ]
    family = project_family(rows, K)
    assert family["current"] == {
        "sessionKey": K,
        "title": "Main",
        "updatedAt": None,
        "parentSessionKey": None,
    }
    assert [m["sessionKey"] for m in family["children"]] == [SUB + "a"]
    assert keys(rows, SUB + "a") == [SUB + "grand"]
    nested = project_family(rows, SUB + "a")
    assert nested["current"] is not None
    assert nested["current"]["parentSessionKey"] == K
    assert nested["children"][0]["parentSessionKey"] == SUB + "a"


def test_current_is_null_when_not_listed() -> None:
    assert project_family([child("a")], K) == {
        "success": True,
        "current": None,
        "children": [member_of(child("a"))],
    }
    assert project_family([], K) == {"success": True, "current": None, "children": []}


def test_order_newest_first_offsets_honoured() -> None:
    rows = [
        child("noon-plus-two", "2026-01-01T12:00:00+02:00"),
        child("eleven-z", "2026-01-01T11:00:00Z"),
        child("offsetless", "2026-01-01T10:30:00"),
        child("date-only", "2026-01-01"),
        child("null"),
        child("garbage", "yesterday"),
        child("number-ish", "1767225600000"),
    ]
    assert keys(rows) == [
        SUB + "eleven-z",
        SUB + "offsetless",
        SUB + "noon-plus-two",
        SUB + "date-only",
        SUB + "garbage",
        SUB + "null",
        SUB + "number-ish",
    ]


def test_offsetless_times_are_utc_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "XST-14")  # a local zone 14 hours ahead of UTC
    time.tzset()
    try:
        rows = [
            child("offsetless", "2026-01-01T10:30:00"),
            child("later", "2026-01-01T10:31:00Z"),
            child("earlier", "2026-01-01T10:29:00Z"),
        ]
        assert keys(rows) == [SUB + "later", SUB + "offsetless", SUB + "earlier"]
    finally:
        monkeypatch.undo()
        time.tzset()


def test_ties_by_code_point() -> None:
    same = "2026-01-01T10:00:00Z"
    rows = [
        child("a", same),
        child("Z", same),
        child("\U0001f600", same),
        child("\uff5e", same),
        child("b", "2026-01-01T11:00:00+01:00"),
        child("sub-ms", "2026-01-01T10:00:00.0004Z"),
    ]
    assert keys(rows) == [SUB + s for s in ("Z", "a", "b", "sub-ms", "\uff5e", "\U0001f600")]


_ids = st.sampled_from([SUB + c for c in "abcdeZ"] + [K, "agent:main:acp:q", SUB + "a:b"])
_parents = st.one_of(st.none(), _ids, st.just("  " + K), st.integers(), st.just(""))
_zones = st.sampled_from([None, *(timezone(timedelta(hours=h)) for h in (-5, 0, 2))])
_times = st.one_of(
    st.none(),
    st.just("garbage"),
    st.builds(lambda when, zone: when.replace(tzinfo=zone).isoformat(), st.datetimes(), _zones),
)


@st.composite
def session_rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    rows = []
    for _ in range(draw(st.integers(0, 12))):
        meta = {"parentSessionId": draw(_parents), "spawnedBy": draw(_parents)}
        when = draw(_times)
        rows.append(info(draw(_ids), when, draw(st.one_of(st.none(), st.text())), meta))
    return rows


# The first st.text() draw of a process builds Hypothesis' Unicode tables (and, on a fresh
# checkout, its .hypothesis cache of them): seconds on a busy machine, which too_slow counts
# as generation time. The examples themselves stay cheap.
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(session_rows(), st.randoms())
def test_projection_properties(rows: list[dict[str, Any]], rnd: random.Random) -> None:
    family = project_family(rows, K)
    firsts: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        firsts.setdefault(row["sessionId"], row)
    expected = {
        sid for sid, row in firsts.items() if is_native_subagent(sid) and parse_parent(row) == K
    }
    listed = [m["sessionKey"] for m in family["children"]]
    assert sorted(listed) == sorted(expected)
    assert all(m["parentSessionKey"] == K for m in family["children"])
    assert family["current"] == (member_of(firsts[K]) if K in firsts else None)
    shuffled = list(firsts.values())
    rnd.shuffle(shuffled)
    assert project_family(shuffled, K)["children"] == family["children"]


class RecordingConnection:
    """Counts what the operation asks of the connection (payload checks must ask nothing)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def ready(self) -> AgentFeatures:
        self.calls.append("ready")
        return AgentFeatures({"loadSession": True, "sessionCapabilities": {"list": {}}})

    async def request(self, method: str, params: Mapping[str, Any]) -> object:
        self.calls.append(method)
        return {"sessions": [info(K)]}


@pytest.mark.parametrize(
    "payload",
    [
        None,
        [],
        [{"sessionKey": K}],
        K,
        {},
        {"sessionKey": None},
        {"sessionKey": 7},
        {"sessionKey": "agent:"},
        {"sessionKey": "main"},
        {"sessionKey": " agent:main:main"},
        {"sessionKey": "Agent:main:main"},
        OrderedDict(sessionKey=K),
    ],
)
async def test_invalid_payload_touches_nothing(
    payload: object, caplog: pytest.LogCaptureFixture
) -> None:
    connection = RecordingConnection()
    with caplog.at_level(logging.INFO, logger="clawline.acp.family"):
        result = await get_acp_session_family(connection, payload)
    assert result == {"success": False, "current": None, "children": [], "error": INVALID_PAYLOAD}
    assert connection.calls == []
    assert caplog.messages == [f"[acp-chat] getSessionFamily failed: {INVALID_PAYLOAD}"]
    assert [record.levelno for record in caplog.records] == [logging.INFO]  # the caller's mistake


class BrokenConnection(RecordingConnection):
    """A connection whose ``session/list`` answer makes the projection itself fail."""

    async def request(self, method: str, params: Mapping[str, Any]) -> object:
        raise ZeroDivisionError("a bug, not a refusal")


async def test_a_bug_is_logged_as_an_error_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="clawline.acp.family"):
        result = await get_session_family(BrokenConnection(), K)
    assert result["success"] is False
    assert result["error"] == "a bug, not a refusal"
    [record] = caplog.records
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert record.exc_info[0] is ZeroDivisionError


async def test_valid_payload_and_key_forms() -> None:
    connection = RecordingConnection()
    result = await get_acp_session_family(connection, {"sessionKey": K, "extra": 1})
    assert result["success"] is True
    assert (await get_session_family(connection, "agent:x"))["success"] is True
    assert (await get_session_family(connection, "agent:"))["success"] is False
    assert connection.calls == ["ready", "session/list", "ready", "session/list"]
