"""The plugin-extension index on every backend: written with the entry in one transaction,
kept in step by patch, delete and reset, backfilled by its migration."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import Store
from clawline.store.extension_index import MAX_INDEXED_VALUE_CHARS

if TYPE_CHECKING:
    from .conftest import Backend

PLUGIN = "openclaw-multi-session-plugins"
SPACE = "xworkmate.sessionMapping"
A = "agent:main:draft:a"
B = "agent:main:draft:b"


def _mapping(thread: str, **more: Any) -> dict[str, Any]:
    return {"pluginExtensions": {PLUGIN: {SPACE: {"appThreadKey": thread, **more}}}}


def _find(store: Store, value: str, field: str = "appThreadKey") -> list[str]:
    return store.sessions_by_extension(PLUGIN, SPACE, field, value)


def _rows(backend: Backend) -> list[tuple[Any, ...]]:
    return backend.rows(
        "SELECT plugin_id, namespace, field, value, session_key FROM session_extension_index"
        " ORDER BY session_key, plugin_id, namespace, field"
    )


def test_every_top_level_string_field_is_indexed(
    catalog: SessionCatalog, store: Store, backend: Backend
) -> None:
    catalog.patch(A, _mapping("thread-a", schemaVersion=1, dirs=["x"], note="n", flag=True))
    catalog.patch(A, {"pluginExtensions": {"other": {"space": {"appThreadKey": "thread-a"}}}})
    assert _rows(backend) == [
        (PLUGIN, SPACE, "appThreadKey", "thread-a", A),
        (PLUGIN, SPACE, "note", "n", A),
        ("other", "space", "appThreadKey", "thread-a", A),
    ]
    assert _find(store, "thread-a") == [A]
    assert _find(store, "n", "note") == [A]
    assert _find(store, "thread-b") == []
    assert store.sessions_by_extension("other", "space", "appThreadKey", "thread-a") == [A]


def test_lookups_follow_every_change(
    catalog: SessionCatalog, store: Store, backend: Backend
) -> None:
    catalog.patch(A, _mapping("shared"))
    catalog.patch(B, _mapping("shared"))
    assert _find(store, "shared") == [A, B]
    catalog.patch(A, _mapping("moved"))
    assert (_find(store, "shared"), _find(store, "moved")) == ([B], [A])
    catalog.patch(A, {"label": "touch", "pluginExtensions": {PLUGIN: {"unrelated": 1}}})
    assert _find(store, "moved") == [A]
    catalog.patch(A, {"pluginExtensions": {PLUGIN: {SPACE: None}}})
    assert _find(store, "moved") == []
    catalog.reset(B)
    assert _find(store, "shared") == [B]
    catalog.patch(A, _mapping("again"))
    catalog.patch(A, {"pluginExtensions": {PLUGIN: None}})
    assert _find(store, "again") == []
    catalog.patch(A, _mapping("again"))
    catalog.delete(A)
    catalog.delete(B)
    assert _rows(backend) == []


def test_value_bounds(catalog: SessionCatalog, store: Store) -> None:
    longest = "x" * MAX_INDEXED_VALUE_CHARS
    catalog.patch(A, _mapping(longest))
    catalog.patch(B, _mapping(longest + "y"))
    assert _find(store, longest) == [A]
    assert _find(store, longest + "y") == []


def test_a_failed_transaction_leaves_no_index_rows(
    catalog: SessionCatalog, store: Store, backend: Backend
) -> None:
    catalog.patch(A, _mapping("before"))
    before = backend.dump()

    def write_then_fail() -> None:
        with catalog.transaction() as work:
            work.patch(A, _mapping("during"))
            work.patch(B, _mapping("during"))
            raise RuntimeError("abort")

    with pytest.raises(RuntimeError):
        write_then_fail()
    assert backend.dump() == before
    assert _find(store, "during") == []
    assert _find(store, "before") == [A]


def test_the_migration_backfills_existing_extensions(
    catalog: SessionCatalog, backend: Backend
) -> None:
    catalog.patch(A, _mapping("old-thread"))
    backend.rows("DROP TABLE session_extension_index")
    backend.rows("DELETE FROM clawline_migrations WHERE name = 'create_session_extension_index'")
    reopened = backend.open()
    assert reopened.sessions_by_extension(PLUGIN, SPACE, "appThreadKey", "old-thread") == [A]
