"""``session/list`` pages the gateway builds in ACP form (``sessions.list`` with ``acpCwd``):
the same ``SessionInfo`` rows as mapping the gateway's rows, read with no more store rows than
the page returns, and the bridge's fallback for a gateway that does not know ``acpCwd``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawline.acp.listing import SessionLister
from clawline.acp.meta import session_info
from clawline.acp.rpc_errors import invalid_params
from clawline.gateway.methods.sessions.listing import ListOutcome, ListPlan, run_listing
from clawline.records.session import SessionEntry
from clawline.sessions.acp_rows import acp_info
from clawline.sessions.catalog import SessionCatalog
from clawline.sessions.listing_rows import RowCache, RowOptions, session_row
from clawline.store.base import SessionQuery
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing import FakeClock

CWD = "/srv/me/project"
MAIN = "agent:main:main"

_texts = st.one_of(st.none(), st.sampled_from(["", "  ", " x ", "/w", "leaf", "none"]), st.text())
_keys = st.sampled_from(
    [
        MAIN,
        "agent:main:subagent:a",
        "agent:ops:discord:group:42",
        "agent:main:telegram:dm:7",
        "global",
        "unknown",
        "Agent:Main:Thread:x",
        "agent:main:cron:job",
    ]
)


@st.composite
def entries(draw: st.DrawFn) -> SessionEntry:
    key = draw(_keys)
    path = tuple(draw(st.lists(st.sampled_from(["agent:main:r", "agent:main:p"]), max_size=3)))
    extra: dict[str, Any] = {}
    for name in ("channel", "subject", "kind", "model"):
        if draw(st.booleans()):
            extra[name] = draw(st.one_of(_texts, st.integers(), st.booleans()))
    return SessionEntry(
        key=key,
        session_id=draw(st.sampled_from(["0123456789abcdef", "s"])),
        created_at=draw(st.integers(0, 2**41)),
        updated_at=draw(st.one_of(st.integers(-5, 2**48), st.integers(253402300800000, 2**60))),
        root_session_key=draw(st.sampled_from(["", " ", MAIN])),
        trace_id=draw(st.sampled_from(["", "t1", " t2 "])),
        lineage_path=(*path, key),
        label=draw(_texts),
        display_name=draw(_texts),
        spawned_by=draw(_texts),
        parent_session_key=draw(_texts),
        spawn_depth=draw(st.one_of(st.none(), st.integers(-2, 5))),
        subagent_role=draw(st.sampled_from([None, "leaf", "orchestrator", "boss"])),
        subagent_control_scope=draw(st.sampled_from([None, "children", "none", "all"])),
        spawned_workspace_dir=draw(_texts),
        spawned_cwd=draw(_texts),
        extra=extra,
    )


@settings(max_examples=400, deadline=None)
@given(
    entry=entries(),
    title=st.one_of(
        st.none(), st.sampled_from(["", " t ", "[Working directory: /a] fix it", "[Working "])
    ),
)
def test_acp_info_is_the_bridge_mapping_of_the_row(entry: SessionEntry, title: str | None) -> None:
    row = session_row(entry, has_active_run=False, title=title)
    assert acp_info(entry, title, CWD) == session_info(row, CWD)


# --- pages through run_listing ---------------------------------------------------------------


def _key(n: int) -> str:
    return f"agent:main:subagent:{n:03d}" if n % 4 == 1 else f"agent:main:dm:{n:03d}"


@pytest.fixture
def catalog(tmp_path: Path) -> SessionCatalog:
    clock = FakeClock()
    catalog = SessionCatalog(SQLiteStore(tmp_path / "splice.db"), clock=clock)
    catalog.patch(MAIN, {"label": "home", "channel": "telegram"})
    for n in range(240):
        clock.advance(7)
        changes: dict[str, object] = {"displayName": f"chat {n}"} if n % 3 == 0 else {}
        if n % 4 == 1:
            changes = {"spawnedBy": MAIN, "spawnDepth": 1, "spawnedWorkspaceDir": "/srv/w"}
        catalog.patch(_key(n), changes)
    for n in range(0, 240, 5):
        catalog.append(
            _key(n),
            "message",
            {
                "role": "user",
                "content": [{"type": "text", "text": f"[Working directory: /x] q{n}"}],
            },
        )
    return catalog


def _plan(cursor: str | None, *, acp: bool, limit: int = 100) -> ListPlan:
    return ListPlan(
        query=SessionQuery(),
        limit=limit,
        cursor=cursor,
        options=RowOptions(derived_titles=True),
        acp_cwd=CWD if acp else None,
    )


def _inactive(key: str) -> bool:
    return False


def _acp_pages(outcome: ListOutcome) -> list[tuple[list[dict[str, Any]], str | None]]:
    pages = orjson.loads(orjson.dumps(outcome.rows))
    assert all(isinstance(text, str) for text, _ in pages)
    return [(orjson.loads(text), after) for text, after in pages]


def _acp_rows(outcome: ListOutcome) -> list[dict[str, Any]]:
    [(rows, after)] = _acp_pages(outcome)
    assert after == outcome.next_cursor
    return rows


def test_acp_pages_split_a_call_with_the_cursor_after_each(catalog: SessionCatalog) -> None:
    cache = RowCache()
    split = ListPlan(
        query=SessionQuery(),
        limit=30,
        options=RowOptions(derived_titles=True),
        acp_cwd=CWD,
        acp_page_size=7,
    )
    pages = _acp_pages(run_listing(catalog, split, _inactive, cache))
    assert [len(rows) for rows, _ in pages] == [7, 7, 7, 7, 2]
    cursor: str | None = None
    for rows, after in pages:  # each page is the page of 7 its cursor would have given
        alone = run_listing(catalog, _plan(cursor, acp=True, limit=7), _inactive, cache)
        assert _acp_rows(alone)[: len(rows)] == rows
        cursor = after
        assert cursor is not None
    following = run_listing(catalog, _plan(cursor, acp=True, limit=7), _inactive, cache)
    assert _acp_rows(following)[0]["sessionId"] not in {
        row["sessionId"] for rows, _ in pages for row in rows
    }


def test_acp_pages_are_the_mapped_gateway_pages(catalog: SessionCatalog) -> None:
    cache = RowCache()
    for _ in range(2):  # the second walk reuses the cached rows
        acp_cursor: str | None = None
        plain_cursor: str | None = None
        walked = 0
        while True:
            spliced = run_listing(catalog, _plan(acp_cursor, acp=True), _inactive, cache)
            plain = run_listing(catalog, _plan(plain_cursor, acp=False), _inactive, cache)
            rows = orjson.loads(orjson.dumps(plain.rows))
            assert _acp_rows(spliced) == [session_info(row, CWD) for row in rows]
            assert (spliced.count, spliced.has_more) == (plain.count, plain.has_more)
            walked += spliced.count
            if spliced.next_cursor is None:
                break
            assert spliced.next_cursor == plain.next_cursor
            acp_cursor, plain_cursor = spliced.next_cursor, plain.next_cursor
        assert walked == 241
    # A change shows at once: the cached row of the changed entry is not reused.
    catalog.patch("agent:main:dm:010", {"displayName": "renamed"}, touch=False)
    first = _acp_rows(run_listing(catalog, _plan(None, acp=True, limit=300), _inactive, cache))
    assert {row["sessionId"]: row["title"] for row in first}["agent:main:dm:010"] == "renamed"
    assert len(first) == 241


class Reads:
    """Every statement the store runs through its fetch, with the rows it returned."""

    def __init__(self, store: SQLiteStore) -> None:
        self.log: list[tuple[str, list[Any]]] = []
        fetch: Callable[..., list[Any]] = store._fetch

        def counting(sql: str, params: Sequence[Any] = ()) -> list[Any]:
            rows = fetch(sql, params)
            self.log.append((sql, rows))
            return rows

        store._fetch = counting  # type: ignore[method-assign]

    def session_rows(self) -> int:
        """Rows read from the ``sessions`` table."""
        return sum(len(rows) for sql, rows in self.log if " FROM sessions" in sql)

    def clear(self) -> None:
        self.log.clear()


@pytest.mark.parametrize("limit", [1, 7, 100])
def test_a_listing_page_reads_no_rows_it_does_not_return(
    catalog: SessionCatalog, limit: int
) -> None:
    store = catalog.store
    assert isinstance(store, SQLiteStore)
    reads = Reads(store)
    cache = RowCache()
    for walk in range(3):  # cold entry cache, then warm (the store's revisions-first read)
        cursor: str | None = None
        pages = 0
        while True:
            reads.clear()
            outcome = run_listing(catalog, _plan(cursor, acp=True, limit=limit), _inactive, cache)
            returned = outcome.count
            assert 0 < returned <= limit
            # The wrapper sees the page's own read (it would see a count or a scan as well).
            assert reads.session_rows() >= returned, (walk, reads.log)
            assert reads.session_rows() <= limit + 1, (walk, pages, [s for s, _ in reads.log])
            pages += 1
            if outcome.next_cursor is None:
                break
            cursor = outcome.next_cursor
        assert pages == -(-241 // limit)


def test_a_gateway_page_reads_only_its_rows_and_their_children(catalog: SessionCatalog) -> None:
    store = catalog.store
    assert isinstance(store, SQLiteStore)
    reads = Reads(store)
    outcome = run_listing(catalog, _plan(None, acp=False, limit=50), _inactive, RowCache())
    rows = orjson.loads(orjson.dumps(outcome.rows))
    children = sum(len(row["childSessions"]) for row in rows)
    listed = [rows for sql, rows in reads.log if " FROM sessions" in sql and "count(*)" not in sql]
    assert sum(len(found) for found in listed) <= 51 + children


# --- the bridge's fallback -------------------------------------------------------------------


class OldGateway:
    """A gateway that does not know ``acpCwd``: it refuses it like any unknown param."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.calls: list[dict[str, Any]] = []

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.calls.append(params)
        assert method == "sessions.list"
        if "acpCwd" in params:
            raise invalid_params("invalid sessions.list params: unknown key 'acpCwd'")
        return {"sessions": self.rows, "nextCursor": None}


async def test_a_gateway_without_acp_rows_gets_the_plain_call(catalog: SessionCatalog) -> None:
    plain = run_listing(catalog, _plan(None, acp=False, limit=20), _inactive)
    rows = orjson.loads(orjson.dumps(plain.rows))
    gateway = OldGateway(rows)
    lister = SessionLister(gateway, CWD, read_ahead=False)  # type: ignore[arg-type]
    for _ in range(2):
        result = await lister.list(cwd=None, cursor=None, meta={})
        assert orjson.loads(orjson.dumps(result)) == {
            "sessions": [session_info(row, CWD) for row in rows]
        }
    assert ["acpCwd" in call for call in gateway.calls] == [True, False, False]
