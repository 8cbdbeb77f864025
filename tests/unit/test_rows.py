"""Listing rows: the encoded fast path gives exactly the rows of the plain builder."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawline.records.session import SessionEntry
from clawline.sessions.catalog import SessionCatalog
from clawline.sessions.listing_rows import RowBuilder, RowCache, RowOptions, derived_title
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing import FakeClock

MAIN = "agent:main:main"


@pytest.fixture
def catalog(tmp_path: Path) -> SessionCatalog:
    catalog = SessionCatalog(SQLiteStore(tmp_path / "rows.db"), clock=FakeClock())
    catalog.patch(MAIN, {"label": "home", "model": "gpt", "deliveryContext": {"to": None}})
    catalog.patch("agent:main:subagent:a", {"spawnedBy": MAIN, "spawnDepth": 1})
    catalog.patch("agent:main:subagent:b", {"spawnedBy": MAIN, "childSessions": "shadow?"})
    catalog.patch(
        "agent:main:discord:group:42", {"displayName": "Team", "pluginExtensions": {"p": {"n": 1}}}
    )
    catalog.append(
        MAIN, "message", {"role": "user", "content": [{"type": "text", "text": "hi there"}]}
    )
    return catalog


@pytest.mark.parametrize(
    "options",
    [RowOptions(), RowOptions(derived_titles=True), RowOptions(last_message=True)],
)
def test_encoded_rows_equal_plain_rows(catalog: SessionCatalog, options: RowOptions) -> None:
    entries = catalog.page(limit=50).entries
    active = {"agent:main:subagent:a"}
    builder = RowBuilder(catalog.store, active.__contains__, RowCache())
    plain = builder.build(entries, options)
    encoded = [
        orjson.loads(orjson.dumps(fragment)) for fragment in builder.build_encoded(entries, options)
    ]
    assert encoded == plain
    for _ in range(2):  # cold, then from the cached heads
        assert orjson.loads(orjson.dumps(builder.build_array(entries, options))) == plain
    assert orjson.loads(orjson.dumps(builder.build_array([], options))) == []
    by_key = {row["key"]: row for row in plain}
    assert by_key[MAIN]["childSessions"] == ["agent:main:subagent:b", "agent:main:subagent:a"]
    assert by_key["agent:main:subagent:a"]["hasActiveRun"] is True
    assert by_key["agent:main:subagent:b"]["childSessions"] == []  # an extra field never shadows
    assert by_key[MAIN]["deliveryContext"] == {"to": None}


def test_cached_encoding_follows_entry_changes(catalog: SessionCatalog) -> None:
    cache = RowCache()
    builder = RowBuilder(catalog.store, lambda key: False, cache)

    def labels() -> dict[str, object]:
        rows = [
            orjson.loads(orjson.dumps(f))
            for f in builder.build_encoded(catalog.page(limit=50).entries)
        ]
        return {row["key"]: row["label"] for row in rows}

    assert labels()[MAIN] == "home"
    catalog.patch(MAIN, {"label": "away"})
    assert labels()[MAIN] == "away"


def test_a_spawned_childs_title_names_its_task(catalog: SessionCatalog) -> None:
    child = "agent:main:subagent:a"
    message = (
        "[Subagent Context] You are running as a subagent (depth 1/1). Results auto-announce "
        "to your requester; do not busy-poll for status.\n\n[Subagent Task]: Review the\n  API"
    )
    content = [{"type": "text", "text": message}]
    catalog.append(child, "message", {"role": "user", "content": content})
    builder = RowBuilder(catalog.store, set[str]().__contains__, RowCache())
    rows = builder.build(catalog.page(limit=50).entries, RowOptions(derived_titles=True))
    by_key = {row["key"]: row for row in rows}
    assert by_key[child]["derivedTitle"] == "[Subagent Context] Review the API"
    assert by_key[MAIN]["derivedTitle"] == "hi there"  # other first messages stay as they are


@settings(max_examples=300, deadline=None)
@given(
    created_at=st.one_of(
        st.integers(0, 2**43 + 5), st.integers(1_780_000_000_000, 1_790_000_000_000)
    )
)
def test_a_titles_day_is_the_days_utc_date(created_at: int) -> None:
    entry = SessionEntry(
        key=MAIN,
        session_id="0123456789",
        created_at=created_at,
        updated_at=created_at,
        root_session_key=MAIN,
        trace_id="t",
        lineage_path=(MAIN,),
    )
    day = dt.datetime.fromtimestamp(created_at / 1000, tz=dt.UTC).strftime("%Y-%m-%d")
    assert derived_title(entry, None) == f"01234567 ({day})"
