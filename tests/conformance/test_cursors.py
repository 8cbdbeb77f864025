"""Cursors through ``SessionCatalog.page``: chains, and every way a cursor is refused."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

import pytest

from clawline.errors import InvalidCursor, InvalidField
from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import SessionQuery
from clawline.testing import FakeClock

if TYPE_CHECKING:
    from .conftest import Backend

TAMPERED = "invalid cursor: signature mismatch (tampered with, or from another store)"


def _b64(payload: object) -> str:
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(cursor: str) -> dict[str, object]:
    decoded: dict[str, object] = json.loads(
        base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    )
    return decoded


def _fill(catalog: SessionCatalog, clock: FakeClock, count: int, agent: str = "main") -> list[str]:
    keys = []
    for i in range(count):
        if i % 3 == 0:
            clock.advance(1)  # some rows share an updatedAt: the key breaks the tie
        keys.append(catalog.patch(f"agent:{agent}:k{i:03d}", {}).after.key)  # type: ignore[union-attr]
    return keys


def _walk(
    catalog: SessionCatalog, query: SessionQuery | None = None, limit: int = 3
) -> tuple[list[str], int]:
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = catalog.page(query, limit=limit, cursor=cursor)
        pages += 1
        assert pages < 1000, "the walk does not end"
        seen.extend(entry.key for entry in page.entries)
        cursor = page.next_cursor
        if cursor is None:
            return seen, pages


def test_cursor_chain_walks_everything_once(catalog: SessionCatalog, clock: FakeClock) -> None:
    keys = _fill(catalog, clock, 10)
    _fill(catalog, clock, 4, agent="ops")
    expected = [e.key for e in catalog.page(limit=100).entries]
    assert len(expected) == 14
    for limit in (1, 3, 7, 14, 15):
        seen, pages = _walk(catalog, limit=limit)
        assert seen == expected
        assert pages == max(1, -(-14 // limit))
    seen, _ = _walk(catalog, SessionQuery(agent_id="main", include_global=False), limit=4)
    assert sorted(seen) == sorted(keys)
    assert seen == [k for k in expected if k.startswith("agent:main:")]


def test_cursor_survives_a_new_store_object(
    catalog: SessionCatalog, backend: Backend, clock: FakeClock
) -> None:
    _fill(catalog, clock, 6)
    first = catalog.page(limit=2)
    assert first.next_cursor is not None
    other = SessionCatalog(backend.open(), clock=clock)
    second = other.page(limit=2, cursor=first.next_cursor)
    expected = [e.key for e in catalog.page(limit=100).entries]
    assert [e.key for e in first.entries + second.entries] == expected[:4]


def test_cursor_after_its_row_is_deleted(catalog: SessionCatalog, clock: FakeClock) -> None:
    keys = _fill(catalog, clock, 6)
    first = catalog.page(limit=2)
    catalog.delete(first.entries[-1].key)
    second = catalog.page(limit=10, cursor=first.next_cursor)
    assert [e.key for e in second.entries] == keys[::-1][2:]


def test_tampered_cursor(catalog: SessionCatalog, clock: FakeClock) -> None:
    _fill(catalog, clock, 5)
    cursor = catalog.page(limit=2).next_cursor
    assert cursor is not None
    payload = _unb64(cursor)
    for field, value in (("u", int(payload["u"]) + 1), ("k", "agent:main:zzz")):  # type: ignore[call-overload]
        forged = _b64({**payload, field: value})
        with pytest.raises(InvalidCursor) as error:
            catalog.page(limit=2, cursor=forged)
        assert str(error.value) == TAMPERED


def test_cursor_from_another_store(
    catalog: SessionCatalog, backend: Backend, clock: FakeClock
) -> None:
    foreign = SessionCatalog(backend.open(backend.new_location()), clock=clock)
    _fill(foreign, clock, 5)
    _fill(catalog, clock, 5)
    foreign_cursor = foreign.page(limit=2).next_cursor
    assert foreign_cursor is not None
    assert foreign.store.secret() != catalog.store.secret()
    with pytest.raises(InvalidCursor) as error:
        catalog.page(limit=2, cursor=foreign_cursor)
    assert str(error.value) == TAMPERED


def test_cursor_used_with_other_filters(catalog: SessionCatalog, clock: FakeClock) -> None:
    _fill(catalog, clock, 5)
    cursor = catalog.page(SessionQuery(agent_id="main"), limit=2).next_cursor
    assert cursor is not None
    assert len(catalog.page(SessionQuery(agent_id="main"), limit=2, cursor=cursor).entries) == 2
    for query in (SessionQuery(), SessionQuery(agent_id="main", search="k"), None):
        with pytest.raises(InvalidCursor) as error:
            catalog.page(query, limit=2, cursor=cursor)
        assert str(error.value) == "invalid cursor: it belongs to a different query"


@pytest.mark.parametrize(
    ("cursor", "message"),
    [
        ("", "invalid cursor: malformed"),
        ("not a cursor", "invalid cursor: malformed"),
        ("%%%", "invalid cursor: malformed"),
        ("x" * 3000, "invalid cursor: malformed"),
        (_b64([1, 2]), "invalid cursor: malformed"),
        (_b64({"u": 1, "k": "a"}), "invalid cursor: malformed"),
        (_b64({"v": 2, "u": 1}), "invalid cursor: malformed"),
        (_b64({"v": 2, "u": "1", "k": "a", "q": "x", "s": "y"}), "invalid cursor: malformed"),
        (_b64({"v": 1, "offset": 100}), "invalid cursor: unsupported version"),
        ('{"v":1,"offset":100}', "invalid cursor: malformed"),
        (
            _b64({"v": 3, "u": 1, "k": "a", "q": "x", "s": "y"}),
            "invalid cursor: unsupported version",
        ),
    ],
)
def test_garbage_cursors(
    catalog: SessionCatalog, clock: FakeClock, cursor: str, message: str
) -> None:
    _fill(catalog, clock, 3)
    with pytest.raises(InvalidCursor) as error:
        catalog.page(limit=2, cursor=cursor)
    assert str(error.value) == message


def test_cursor_that_is_not_a_string(catalog: SessionCatalog) -> None:
    with pytest.raises(InvalidCursor) as error:
        catalog.page(limit=2, cursor=42)  # type: ignore[arg-type]
    assert str(error.value) == "invalid cursor: malformed"


@pytest.mark.parametrize("limit", [0, -1, 10_001, True, 2.5])
def test_invalid_limits(catalog: SessionCatalog, limit: object) -> None:
    with pytest.raises(InvalidField) as error:
        catalog.page(limit=limit)  # type: ignore[arg-type]
    assert str(error.value) == "invalid limit (use an integer from 1 to 10000)"
