"""apply_changes: every rule of a change set and its exact error text."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

import pytest

from clawline.errors import (
    InvalidField,
    InvalidLabel,
    InvalidSessionKey,
    LineageCycle,
    LineageFieldNotSupported,
    LineageImmutable,
)
from clawline.records.session import LINEAGE_FIELDS, SessionEntry
from clawline.sessions.changes import (
    MAX_DISPLAY_NAME,
    STATUSES,
    ChangeResult,
    apply_changes,
    new_trace_id,
    validate_trace_id,
)

NOW = 1_790_000_000_000
SUB = "agent:main:subagent:c1"
ACP = "agent:codex:acp:c2"
DASH = "agent:main:dashboard:d1"
MAIN = "agent:main:main"
TRACE = "0123456789abcdef0123456789abcdef"


def new(key: str, changes: Mapping[str, object], now: int = NOW) -> ChangeResult:
    return apply_changes(None, key, changes, now=now)


def existing(key: str = SUB, **fields: object) -> SessionEntry:
    entry = new(key, {}, now=NOW - 1000).entry
    return replace(entry, **fields)  # type: ignore[arg-type]


def refused(
    error: type[Exception],
    message: str,
    key: str,
    changes: Mapping[str, object],
    current: SessionEntry | None = None,
) -> None:
    with pytest.raises(error) as caught:
        apply_changes(current, key, changes, now=NOW)
    assert str(caught.value) == message


# --- creation --------------------------------------------------------------------------------


def test_new_entry_defaults() -> None:
    result = new(SUB, {})
    entry = result.entry
    assert entry.key == SUB
    assert entry.created_at == entry.updated_at == NOW
    assert entry.lineage_path == (SUB,)
    assert entry.root_session_key == SUB
    assert re.fullmatch(r"[0-9a-f]{32}", entry.trace_id)
    assert re.fullmatch(r"[0-9a-f-]{36}", entry.session_id)
    assert result.new_parent is None
    assert result.label_changed is False


def test_new_entry_takes_valid_session_and_trace_ids() -> None:
    entry = new(MAIN, {"sessionId": "abc-1", "traceId": TRACE}).entry
    assert entry.session_id == "abc-1"
    assert entry.trace_id == TRACE


def test_new_session_id_is_validated() -> None:
    refused(InvalidField, "Invalid session ID: Bad/Id", MAIN, {"sessionId": "Bad/Id"})


def test_touch_and_clock_skew() -> None:
    current = existing(updated_at=NOW + 5)
    # never moves updatedAt backwards
    assert apply_changes(current, SUB, {"label": "x"}, now=NOW).entry.updated_at == NOW + 5
    later = apply_changes(current, SUB, {"label": "x"}, now=NOW + 10).entry
    assert later.updated_at == NOW + 10
    untouched = apply_changes(current, SUB, {"label": "x"}, now=NOW + 10, touch=False).entry
    assert untouched.updated_at == NOW + 5
    # a new entry always gets updatedAt, touch or not
    assert apply_changes(None, SUB, {}, now=NOW, touch=False).entry.updated_at == NOW


def test_empty_change_set_on_existing_entry_only_touches() -> None:
    current = existing()
    assert apply_changes(current, SUB, {}, now=NOW, touch=False).entry == current


# --- derived and core fields -----------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["key", "agentId", "rootSessionKey", "createdAt", "updatedAt", "lineage"]
)
def test_derived_fields_are_refused(name: str) -> None:
    refused(InvalidField, f"{name} is maintained by clawline and cannot be set", SUB, {name: "x"})
    refused(InvalidField, f"{name} is maintained by clawline and cannot be set", SUB, {name: None})


def test_session_id_cannot_be_patched() -> None:
    current = existing()
    message = "sessionId cannot be patched; reset the session instead"
    refused(InvalidField, message, SUB, {"sessionId": "other"}, current)
    refused(InvalidField, message, SUB, {"sessionId": None}, current)
    same = apply_changes(current, SUB, {"sessionId": current.session_id}, now=NOW).entry
    assert same.session_id == current.session_id


def test_trace_id_is_fixed_at_creation() -> None:
    current = existing()
    message = "traceId is fixed when a session is created"
    refused(InvalidField, message, SUB, {"traceId": TRACE}, current)
    refused(InvalidField, message, SUB, {"traceId": None}, current)
    assert apply_changes(current, SUB, {"traceId": current.trace_id}, now=NOW).entry == replace(
        current, updated_at=NOW
    )


@pytest.mark.parametrize(
    "value",
    [
        "0" * 32,
        "0123456789ABCDEF0123456789ABCDEF",
        "0123456789abcdef",
        TRACE + "0",
        "g" * 32,
        32,
        None,
        b"0123456789abcdef0123456789abcdef",
    ],
)
def test_trace_id_validation(value: object) -> None:
    with pytest.raises(InvalidField) as caught:
        validate_trace_id(value)
    assert str(caught.value) == "invalid traceId (use 32 lower-case hex digits, not all zero)"


def test_trace_id_validation_on_creation() -> None:
    refused(
        InvalidField,
        "invalid traceId (use 32 lower-case hex digits, not all zero)",
        MAIN,
        {"traceId": "nope"},
    )
    assert new(MAIN, {"traceId": None}).entry.trace_id != TRACE  # null means "generate"


def test_new_trace_ids_are_valid_and_distinct() -> None:
    ids = {new_trace_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(validate_trace_id(value) == value for value in ids)


# --- label, display name, status, timestamps -------------------------------------------------


def test_label_is_trimmed_and_flags_a_change() -> None:
    result = new(MAIN, {"label": "  Research  "})
    assert result.entry.label == "Research"
    assert result.label_changed is True
    current = existing(MAIN, label="Research")
    same = apply_changes(current, MAIN, {"label": " Research"}, now=NOW)
    assert same.label_changed is False
    cleared = apply_changes(current, MAIN, {"label": None}, now=NOW)
    assert cleared.entry.label is None
    assert cleared.label_changed is True


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (3, "invalid label: must be a string"),
        ("   ", "invalid label: empty"),
        ("x" * 513, "invalid label: too long (max 512)"),
    ],
)
def test_label_errors(value: object, message: str) -> None:
    refused(InvalidLabel, message, MAIN, {"label": value})


def test_label_at_limit_is_accepted() -> None:
    assert new(MAIN, {"label": "x" * 512}).entry.label == "x" * 512


def test_display_name() -> None:
    assert new(MAIN, {"displayName": "Hi"}).entry.display_name == "Hi"
    assert new(MAIN, {"displayName": "x" * MAX_DISPLAY_NAME}).entry.display_name is not None
    current = existing(MAIN, display_name="Hi")
    assert apply_changes(current, MAIN, {"displayName": None}, now=NOW).entry.display_name is None
    message = f"invalid displayName (use a string of at most {MAX_DISPLAY_NAME} characters)"
    refused(InvalidField, message, MAIN, {"displayName": 5})
    refused(InvalidField, message, MAIN, {"displayName": "x" * (MAX_DISPLAY_NAME + 1)})


@pytest.mark.parametrize("status", STATUSES)
def test_statuses(status: str) -> None:
    assert new(MAIN, {"status": status}).entry.status == status


@pytest.mark.parametrize("status", ["RUNNING", "ok", "", 1])
def test_bad_status(status: object) -> None:
    refused(
        InvalidField,
        'invalid status (use "running", "done", "failed", "killed" or "timeout")',
        MAIN,
        {"status": status},
    )


@pytest.mark.parametrize("name", ["startedAt", "endedAt"])
def test_timestamps(name: str) -> None:
    attr = "started_at" if name == "startedAt" else "ended_at"
    assert getattr(new(MAIN, {name: 0}).entry, attr) == 0
    assert getattr(new(MAIN, {name: NOW}).entry, attr) == NOW
    assert getattr(new(MAIN, {name: None}).entry, attr) is None
    for bad in (-1, 1.5, "1", True):
        refused(InvalidField, f"invalid {name} (use epoch milliseconds >= 0)", MAIN, {name: bad})


# --- lineage ---------------------------------------------------------------------------------


def test_spawned_by_sets_a_new_parent_and_is_canonicalised() -> None:
    result = new(SUB, {"spawnedBy": "Agent:Main:Main", "spawnDepth": 1, "subagentRole": "leaf"})
    assert result.entry.spawned_by == MAIN
    assert result.new_parent == MAIN
    assert result.entry.spawn_depth == 1
    assert result.entry.subagent_role == "leaf"
    assert new(SUB, {"spawnedBy": "main"}).new_parent == MAIN
    assert new(ACP, {"spawnedBy": MAIN}).new_parent == MAIN
    # the lineage path and root are the catalog's to fill in
    assert result.entry.lineage_path == (SUB,)


def test_all_lineage_fields_on_a_subagent() -> None:
    entry = new(
        SUB,
        {
            "spawnedBy": MAIN,
            "spawnDepth": 0,
            "subagentRole": "orchestrator",
            "subagentControlScope": "children",
            "spawnedWorkspaceDir": "/w",
            "spawnedCwd": "/w/sub",
        },
    ).entry
    assert (entry.spawn_depth, entry.subagent_role, entry.subagent_control_scope) == (
        0,
        "orchestrator",
        "children",
    )
    assert (entry.spawned_workspace_dir, entry.spawned_cwd) == ("/w", "/w/sub")


@pytest.mark.parametrize("name", [n for n in LINEAGE_FIELDS if n != "parentSessionKey"])
@pytest.mark.parametrize("key", [MAIN, DASH, "agent:main:cron:j", "global"])
def test_spawn_fields_need_a_subagent_or_acp_key(name: str, key: str) -> None:
    refused(
        LineageFieldNotSupported,
        f"{name} is only supported for subagent:* or acp:* sessions",
        key,
        {name: "x"},
    )


def test_parent_session_key_is_accepted_on_any_key() -> None:
    result = new(DASH, {"parentSessionKey": MAIN})
    assert result.entry.parent_session_key == MAIN
    assert result.new_parent == MAIN
    assert new(SUB, {"parentSessionKey": MAIN}).new_parent == MAIN


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("spawnedBy", 5, "invalid spawnedBy: must be a string"),
        ("spawnedBy", "  ", "invalid spawnedBy: empty"),
        ("parentSessionKey", "", "invalid parentSessionKey: empty"),
        ("parentSessionKey", [], "invalid parentSessionKey: must be a string"),
        ("spawnDepth", -1, "invalid spawnDepth (use an integer >= 0)"),
        ("spawnDepth", 1.0, "invalid spawnDepth (use an integer >= 0)"),
        ("spawnDepth", True, "invalid spawnDepth (use an integer >= 0)"),
        ("spawnDepth", "1", "invalid spawnDepth (use an integer >= 0)"),
        ("subagentRole", "boss", 'invalid subagentRole (use "orchestrator" or "leaf")'),
        ("subagentControlScope", "all", 'invalid subagentControlScope (use "children" or "none")'),
        ("spawnedWorkspaceDir", "", "invalid spawnedWorkspaceDir: empty"),
        ("spawnedWorkspaceDir", 1, "invalid spawnedWorkspaceDir: must be a string"),
        ("spawnedCwd", " ", "invalid spawnedCwd: empty"),
    ],
)
def test_lineage_value_errors(name: str, value: object, message: str) -> None:
    refused(InvalidField, message, SUB, {name: value})


def test_lineage_parent_key_must_be_a_valid_key() -> None:
    with pytest.raises(InvalidSessionKey):
        new(SUB, {"spawnedBy": "agent:x"})
    with pytest.raises(InvalidSessionKey):
        new(DASH, {"parentSessionKey": "a b"})


@pytest.mark.parametrize(
    ("name", "attr", "value", "other"),
    [
        ("spawnedBy", "spawned_by", MAIN, "agent:main:other"),
        ("spawnDepth", "spawn_depth", 1, 2),
        ("subagentRole", "subagent_role", "leaf", "orchestrator"),
        ("subagentControlScope", "subagent_control_scope", "none", "children"),
        ("spawnedWorkspaceDir", "spawned_workspace_dir", "/a", "/b"),
        ("spawnedCwd", "spawned_cwd", "/a", "/b"),
        ("parentSessionKey", "parent_session_key", MAIN, "agent:main:other"),
    ],
)
def test_lineage_fields_are_immutable(name: str, attr: str, value: object, other: object) -> None:
    current = existing(SUB, **{attr: value})
    refused(LineageImmutable, f"{name} cannot be cleared once set", SUB, {name: None}, current)
    refused(LineageImmutable, f"{name} cannot be changed once set", SUB, {name: other}, current)
    # re-sending the identical value is a no-op
    same = apply_changes(current, SUB, {name: value}, now=NOW, touch=False)
    assert same.entry == current
    assert same.new_parent is None


def test_clearing_an_unset_lineage_field_is_a_no_op() -> None:
    current = existing(SUB)
    assert apply_changes(current, SUB, {"spawnedBy": None}, now=NOW, touch=False).entry == current


def test_setting_spawned_by_later_is_a_new_parent() -> None:
    result = apply_changes(existing(SUB), SUB, {"spawnedBy": MAIN}, now=NOW)
    assert result.new_parent == MAIN


def test_lineage_parent_cannot_move_between_fields() -> None:
    current = existing(SUB, spawned_by=MAIN)
    refused(
        LineageImmutable,
        f"lineage parent cannot be changed once set ({MAIN})",
        SUB,
        {"parentSessionKey": "agent:main:other"},
        current,
    )
    # the same parent through the other field changes nothing about the tree
    result = apply_changes(current, SUB, {"parentSessionKey": MAIN}, now=NOW)
    assert result.new_parent is None
    assert result.entry.parent_session_key == MAIN


def test_parent_session_key_wins_over_spawned_by_on_creation() -> None:
    result = new(SUB, {"spawnedBy": MAIN, "parentSessionKey": DASH})
    assert result.new_parent == DASH
    assert result.entry.lineage_parent == DASH


def test_own_parent_is_a_cycle() -> None:
    refused(LineageCycle, f"lineage cycle: {SUB} cannot be its own parent", SUB, {"spawnedBy": SUB})
    refused(
        LineageCycle,
        f"lineage cycle: {DASH} cannot be its own parent",
        DASH,
        {"parentSessionKey": "Agent:Main:Dashboard:D1"},
    )


# --- plugin extensions -----------------------------------------------------------------------


def test_plugin_extensions_merge_per_namespace() -> None:
    current = existing(
        MAIN, plugin_extensions={"p1": {"a": 1, "b": {"x": [1]}}, "p2": {"c": "keep"}}
    )
    result = apply_changes(
        current,
        MAIN,
        {"pluginExtensions": {"p1": {"a": None, "n": True}, "p3": {"z": None, "y": 0}}},
        now=NOW,
    )
    assert result.entry.plugin_extensions == {
        "p1": {"b": {"x": [1]}, "n": True},
        "p2": {"c": "keep"},
        "p3": {"y": 0},
    }
    # the current entry is untouched (no shared mutable state)
    assert current.plugin_extensions == {"p1": {"a": 1, "b": {"x": [1]}}, "p2": {"c": "keep"}}


def test_plugin_extensions_null_plugin_removes_it_and_empty_plugins_vanish() -> None:
    current = existing(MAIN, plugin_extensions={"p1": {"a": 1}, "p2": {"b": 2}})
    result = apply_changes(
        current, MAIN, {"pluginExtensions": {"p1": None, "p2": {"b": None}, "p9": None}}, now=NOW
    )
    assert result.entry.plugin_extensions == {}
    assert apply_changes(
        current, MAIN, {"pluginExtensions": {}}, now=NOW
    ).entry.plugin_extensions == {
        "p1": {"a": 1},
        "p2": {"b": 2},
    }


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "invalid pluginExtensions: must be an object of plugin ids"),
        ([1], "invalid pluginExtensions: must be an object of plugin ids"),
        ({"": {}}, "invalid pluginExtensions: plugin ids must be non-empty strings"),
        ({" ": {}}, "invalid pluginExtensions: plugin ids must be non-empty strings"),
        ({1: {}}, "invalid pluginExtensions: plugin ids must be non-empty strings"),
        ({"p": 1}, "invalid pluginExtensions.p: must be an object"),
        ({"p": {"": 1}}, "invalid pluginExtensions.p: namespaces must be non-empty strings"),
    ],
)
def test_plugin_extensions_errors(value: object, message: str) -> None:
    refused(InvalidField, message, MAIN, {"pluginExtensions": value})


def test_plugin_extension_values_must_be_json() -> None:
    refused(
        InvalidField,
        "invalid pluginExtensions.p.n: numbers must be finite",
        MAIN,
        {"pluginExtensions": {"p": {"n": float("nan")}}},
    )
    refused(
        InvalidField,
        "invalid pluginExtensions.p.n: set is not JSON",
        MAIN,
        {"pluginExtensions": {"p": {"n": {1, 2}}}},
    )


# --- extra fields ----------------------------------------------------------------------------


def test_extra_fields_are_kept_and_cleared() -> None:
    entry = new(MAIN, {"model": "gpt", "deliveryContext": {"channel": "slack"}}).entry
    assert entry.extra == {"model": "gpt", "deliveryContext": {"channel": "slack"}}
    assert entry.to_json()["model"] == "gpt"
    cleared = apply_changes(entry, MAIN, {"model": None, "absent": None}, now=NOW).entry
    assert cleared.extra == {"deliveryContext": {"channel": "slack"}}


def test_clearing_an_absent_extra_field_changes_nothing() -> None:
    current = existing(MAIN)
    result = apply_changes(current, MAIN, {"nothing": None}, now=NOW, touch=False)
    assert result.entry == current


@pytest.mark.parametrize("name", ["", 5])
def test_bad_extra_field_names(name: object) -> None:
    refused(InvalidField, f"invalid field name: {name!r}", MAIN, {name: 1})  # type: ignore[dict-item]


def test_extra_values_must_be_json() -> None:
    refused(InvalidField, "invalid model: numbers must be finite", MAIN, {"model": float("inf")})
    refused(InvalidField, "invalid model: object is not JSON", MAIN, {"model": object()})


def test_the_first_broken_rule_refuses_everything() -> None:
    current = existing(MAIN, label="keep")
    with pytest.raises(InvalidField):
        apply_changes(current, MAIN, {"label": "new", "status": "bogus"}, now=NOW)
    assert current.label == "keep"


# --- values every backend can store ---------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        (
            {"displayName": "a\x00b"},
            InvalidField,
            "invalid displayName: NUL characters are not allowed",
        ),
        ({"label": "a\x00b"}, InvalidLabel, "invalid label: NUL characters are not allowed"),
        ({"model": "a\x00"}, InvalidField, "invalid model: NUL characters are not allowed"),
        ({"model": {"k\x00": 1}}, InvalidField, "invalid model: NUL characters are not allowed"),
        (
            {"model": ["ok", ["\x00"]]},
            InvalidField,
            "invalid model: NUL characters are not allowed",
        ),
        ({"a\x00": 1}, InvalidField, "invalid field name: 'a\\x00'"),
        (
            {"pluginExtensions": {"p\x00": {}}},
            InvalidField,
            "invalid pluginExtensions: plugin ids must be non-empty strings",
        ),
        (
            {"pluginExtensions": {"p": {"n\x00": 1}}},
            InvalidField,
            "invalid pluginExtensions.p: namespaces must be non-empty strings",
        ),
        (
            {"pluginExtensions": {"p": {"n": "\x00"}}},
            InvalidField,
            "invalid pluginExtensions.p.n: NUL characters are not allowed",
        ),
        ({"startedAt": 2**63}, InvalidField, "invalid startedAt (use epoch milliseconds >= 0)"),
    ],
)
def test_values_no_backend_can_store(
    changes: dict[str, object], error: type[Exception], message: str
) -> None:
    refused(error, message, MAIN, changes)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("spawnedCwd", "/a\x00", "invalid spawnedCwd: NUL characters are not allowed"),
        ("spawnDepth", 2**63, "invalid spawnDepth (use an integer >= 0)"),
    ],
)
def test_lineage_values_no_backend_can_store(name: str, value: object, message: str) -> None:
    refused(InvalidField, message, SUB, {name: value})


def test_largest_stored_integer_is_accepted() -> None:
    entry = new(SUB, {"endedAt": 2**63 - 1, "spawnDepth": 2**63 - 1}).entry
    assert (entry.ended_at, entry.spawn_depth) == (2**63 - 1, 2**63 - 1)


# --- regressions of bugs found and fixed ----------------------------------------------------


def test_trace_id_with_trailing_newline_is_refused() -> None:
    with pytest.raises(InvalidField):
        validate_trace_id(TRACE + "\n")


def test_non_string_session_id_is_refused() -> None:
    with pytest.raises(InvalidField):
        new(MAIN, {"sessionId": 123})


def test_json_values_need_string_object_keys() -> None:
    # json.dumps turns 1 into "1", so the stored entry would differ from the one returned
    with pytest.raises(InvalidField):
        new(MAIN, {"model": {1: "x"}})


def test_deeply_nested_json_value_is_invalid_field() -> None:
    deep: list[object] = []
    level = deep
    for _ in range(5000):
        inner: list[object] = []
        level.append(inner)
        level = inner
    with pytest.raises(InvalidField):
        new(MAIN, {"model": deep})
