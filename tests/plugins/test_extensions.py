"""The extension API (``read_extension``, ``update_extension``, ``find_sessions``, as the plugin
host offers them) on both backends: one transaction per update, nothing written when ``update``
refuses, and a lookup that is an index search."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from clawline.config import Settings
from clawline.errors import Conflict, InvalidField, SessionNotFound
from clawline.runtime import Runtime
from clawline.store._extensions_sql import LOOKUP
from clawline.types import JSON

PLUGIN = "openclaw-multi-session-plugins"
SPACE = "xworkmate.sessionMapping"
KEY = "agent:main:draft:1780636411666238-3"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def services(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Runtime]:
    url = None
    if request.param == "postgres":
        schemas = request.getfixturevalue("pg_schemas")
        url = f"{request.getfixturevalue('pg_url')}?schema={schemas.new('ext')}"
    opened = Runtime.open(Settings(state_dir=tmp_path / "state", store_url=url))
    yield opened
    opened.close()


def _set(thread: str) -> Any:
    def update(current: JSON | None) -> JSON:
        return {"schemaVersion": 1, "appThreadKey": thread, "previous": current}

    return update


def _snapshot(services: Runtime) -> tuple[object, list[str]]:
    entry = services.store.get(KEY)
    return entry, services.plugin_host.find_sessions(PLUGIN, SPACE, "appThreadKey", "thread-main")


def test_update_creates_reads_and_finds(services: Runtime) -> None:
    value = services.plugin_host.update_extension(
        KEY, PLUGIN, SPACE, _set("thread-main"), create=True
    )
    assert value == {"schemaVersion": 1, "appThreadKey": "thread-main", "previous": None}
    assert services.plugin_host.read_extension(KEY, PLUGIN, SPACE) == value
    assert services.plugin_host.read_extension(KEY, PLUGIN, "other") is None
    assert services.plugin_host.read_extension("agent:main:nobody", PLUGIN, SPACE) is None
    assert services.plugin_host.find_sessions(PLUGIN, SPACE, "appThreadKey", "thread-main") == [KEY]
    again = services.plugin_host.update_extension(KEY, PLUGIN, SPACE, _set("thread-2"))
    assert again is not None
    assert again["previous"] == value  # type: ignore[index, call-overload]
    assert services.plugin_host.find_sessions(PLUGIN, SPACE, "appThreadKey", "thread-main") == []
    assert services.plugin_host.find_sessions(PLUGIN, SPACE, "appThreadKey", "thread-2") == [KEY]


def test_the_value_handed_out_is_a_copy(services: Runtime) -> None:
    services.plugin_host.update_extension(
        KEY, PLUGIN, SPACE, lambda _: {"dirs": ["a"]}, create=True
    )
    read = services.plugin_host.read_extension(KEY, PLUGIN, SPACE)
    assert isinstance(read, dict)
    read["dirs"].append("mutated")

    def mutate_and_refuse(current: JSON | None) -> JSON | None:
        assert isinstance(current, dict)
        current["dirs"].append("mutated")
        raise Conflict("no")

    with pytest.raises(Conflict):
        services.plugin_host.update_extension(KEY, PLUGIN, SPACE, mutate_and_refuse)
    assert services.plugin_host.read_extension(KEY, PLUGIN, SPACE) == {"dirs": ["a"]}


def _not_json(current: JSON | None) -> Any:
    return {"bad": {1, 2}}


def test_a_refusing_update_writes_nothing(services: Runtime) -> None:
    services.plugin_host.update_extension(KEY, PLUGIN, SPACE, _set("thread-main"), create=True)
    before = _snapshot(services)

    def refuse(current: JSON | None) -> JSON | None:
        raise Conflict("conflict: xworkmate session mapping already points to a different session")

    with pytest.raises(Conflict, match="already points"):
        services.plugin_host.update_extension(KEY, PLUGIN, SPACE, refuse)
    with pytest.raises(InvalidField, match=f"pluginExtensions.{PLUGIN}.{SPACE}"):
        services.plugin_host.update_extension(KEY, PLUGIN, SPACE, _not_json)
    assert _snapshot(services) == before


def test_missing_sessions_are_created_only_when_asked(services: Runtime) -> None:
    with pytest.raises(SessionNotFound, match=f"session not found: {KEY}"):
        services.plugin_host.update_extension(KEY, PLUGIN, SPACE, _set("thread-main"))
    assert services.store.get(KEY) is None
    assert (
        services.plugin_host.update_extension(KEY, PLUGIN, SPACE, lambda _: None, create=True)
        is None
    )
    assert services.store.get(KEY) is None
    services.plugin_host.update_extension(KEY, PLUGIN, SPACE, _set("thread-main"), create=True)
    assert services.store.get(KEY) is not None


def test_none_deletes_the_namespace_and_its_index_rows(services: Runtime) -> None:
    services.plugin_host.update_extension(KEY, PLUGIN, SPACE, _set("thread-main"), create=True)
    services.plugin_host.update_extension(KEY, PLUGIN, "keep", lambda _: {"appThreadKey": "kept"})
    entry = services.store.get(KEY)
    assert entry is not None
    assert services.plugin_host.update_extension(KEY, PLUGIN, SPACE, lambda _: None) is None
    after = services.store.get(KEY)
    assert after is not None
    assert after.plugin_extensions == {PLUGIN: {"keep": {"appThreadKey": "kept"}}}
    assert after.updated_at == entry.updated_at  # extension writes are not activity
    assert services.plugin_host.find_sessions(PLUGIN, SPACE, "appThreadKey", "thread-main") == []
    assert services.plugin_host.find_sessions(PLUGIN, "keep", "appThreadKey", "kept") == [KEY]
    services.catalog.delete(KEY)
    assert services.plugin_host.find_sessions(PLUGIN, "keep", "appThreadKey", "kept") == []


@pytest.mark.parametrize(
    ("plugin", "namespace", "field", "value", "message"),
    [
        ("", SPACE, "f", "v", "invalid plugin id"),
        (PLUGIN, " ", "f", "v", "invalid namespace"),
        (PLUGIN, SPACE, "", "v", "invalid field"),
        (PLUGIN, SPACE, "f", 5, "only string fields are indexed"),
    ],
)
def test_bad_lookups_are_refused(
    services: Runtime, plugin: str, namespace: str, field: str, value: Any, message: str
) -> None:
    with pytest.raises(InvalidField, match=message):
        services.plugin_host.find_sessions(plugin, namespace, field, value)


def test_bad_names_are_refused_before_anything_is_read(services: Runtime) -> None:
    with pytest.raises(InvalidField, match="invalid plugin id"):
        services.plugin_host.update_extension(KEY, "", SPACE, _set("x"), create=True)
    with pytest.raises(InvalidField, match="invalid namespace"):
        services.plugin_host.read_extension(KEY, PLUGIN, "\x00")
    assert services.store.get(KEY) is None


def test_sqlite_lookup_is_an_index_search(tmp_path: Path) -> None:
    services = Runtime.open(Settings(state_dir=tmp_path / "state"))
    try:
        for n in range(300):
            services.plugin_host.update_extension(
                f"agent:main:s{n}", PLUGIN, SPACE, _set(f"t{n}"), create=True
            )
        path = services.settings.sqlite_path
        db = sqlite3.connect(path)
        try:
            db.execute("ANALYZE")
            plan = db.execute(
                f"EXPLAIN QUERY PLAN {LOOKUP}", (PLUGIN, SPACE, "appThreadKey", "t7")
            ).fetchall()
        finally:
            db.close()
        details = " | ".join(row[-1] for row in plan)
        assert "SEARCH session_extension_index USING INDEX session_extensions_by_value" in details
        assert "(plugin_id=? AND namespace=? AND field=? AND value=?)" in details
        assert "SCAN" not in details
        assert services.plugin_host.find_sessions(PLUGIN, SPACE, "appThreadKey", "t7") == [
            "agent:main:s7"
        ]
    finally:
        services.close()


@pytest.mark.postgres
def test_postgres_lookup_is_an_index_search(tmp_path: Path, pg_url: str, pg_schemas: Any) -> None:
    schema = pg_schemas.new("plan")
    services = Runtime.open(
        Settings(state_dir=tmp_path / "state", store_url=f"{pg_url}?schema={schema}")
    )
    try:
        services.plugin_host.update_extension(KEY, PLUGIN, SPACE, _set("thread-main"), create=True)
        with psycopg.connect(pg_url, autocommit=True) as db:
            db.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            db.execute(
                "INSERT INTO session_extension_index"
                " SELECT %s, %s, 'appThreadKey', 'thread-' || n, 'agent:main:s' || n"
                " FROM generate_series(1, 20000) AS n",
                (PLUGIN, SPACE),
            )
            db.execute("ANALYZE session_extension_index")
            plan = db.execute(
                "EXPLAIN " + LOOKUP.replace("?", "%s"),
                (PLUGIN, SPACE, "appThreadKey", "thread-main"),
            ).fetchall()
        text = "\n".join(row[0] for row in plan)
        assert "session_extensions_by_value" in text
        assert "Seq Scan" not in text
        assert services.plugin_host.find_sessions(PLUGIN, SPACE, "appThreadKey", "thread-main") == [
            KEY
        ]
    finally:
        services.close()
