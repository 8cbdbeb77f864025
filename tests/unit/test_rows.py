"""Listing rows: the encoded fast path gives exactly the rows of the plain builder."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from clawline.sessions.catalog import SessionCatalog
from clawline.sessions.listing_rows import RowBuilder, RowCache, RowOptions
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
