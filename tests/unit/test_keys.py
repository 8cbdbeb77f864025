"""Session keys: every shape of OpenClaw's key grammar, normalisation and refusals."""

from __future__ import annotations

import re
import uuid

import pytest

from clawline import keys
from clawline.errors import InvalidField, InvalidInput, InvalidSessionKey

UUID = "0f8fad5b-d9cb-469f-a165-70867728950e"


# --- shapes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        # agent main and its aliases
        ("", "agent:main:main"),
        ("main", "agent:main:main"),
        ("MAIN", "agent:main:main"),
        ("agent:main:main", "agent:main:main"),
        ("agent:ops:main", "agent:ops:main"),
        # direct messages: per-peer, per-channel-peer, per-account-channel-peer
        ("agent:main:direct:u123", "agent:main:direct:u123"),
        ("agent:main:telegram:direct:U123", "agent:main:telegram:direct:u123"),
        ("agent:main:slack:acct7:direct:u123", "agent:main:slack:acct7:direct:u123"),
        # group / channel / room
        ("agent:main:discord:group:42", "agent:main:discord:group:42"),
        ("agent:main:slack:channel:C0FFEE", "agent:main:slack:channel:c0ffee"),
        ("agent:main:matrix:room:!abc", "agent:main:matrix:room:!abc"),
        # threads, including nested ones
        ("agent:main:slack:channel:c1:thread:1712.5", "agent:main:slack:channel:c1:thread:1712.5"),
        ("agent:main:main:thread:A:thread:B", "agent:main:main:thread:a:thread:b"),
        # native sub-agent and ACP children
        (f"agent:main:subagent:{UUID}", f"agent:main:subagent:{UUID}"),
        (f"agent:codex:acp:{UUID}", f"agent:codex:acp:{UUID}"),
        (f"acp:{UUID}", f"agent:main:acp:{UUID}"),
        (f"subagent:{UUID}", f"agent:main:subagent:{UUID}"),
        # dashboard, cron, cron runs
        (f"agent:main:dashboard:{UUID}", f"agent:main:dashboard:{UUID}"),
        ("cron:nightly", "agent:main:cron:nightly"),
        ("agent:main:cron:nightly:run:r1", "agent:main:cron:nightly:run:r1"),
        # webhook, node, heartbeat
        (f"hook:{UUID}", f"agent:main:hook:{UUID}"),
        ("node-abc", "agent:main:node-abc"),
        ("agent:main:main:heartbeat", "agent:main:main:heartbeat"),
        # literal buckets
        ("global", "global"),
        ("unknown", "unknown"),
        ("GLOBAL", "global"),
        # surrounding whitespace is trimmed, case folded
        ("  Agent:Main:Discord:Group:42  ", "agent:main:discord:group:42"),
    ],
)
def test_canonicalize_shapes(raw: str, canonical: str) -> None:
    assert keys.canonicalize(raw) == canonical


def test_canonicalize_uses_configured_default_agent_and_main_key() -> None:
    assert keys.canonicalize("", default_agent_id="ops") == "agent:ops:main"
    assert keys.canonicalize("main", default_agent_id="Ops") == "agent:ops:main"
    assert keys.canonicalize("work", main_key="work") == "agent:main:work"
    assert keys.canonicalize("cron:x", default_agent_id="ops") == "agent:ops:cron:x"
    # an explicit agent key is never moved to the default agent
    assert keys.canonicalize("agent:main:cron:x", default_agent_id="ops") == "agent:main:cron:x"


def test_parse_agent_session_key() -> None:
    parsed = keys.parse_agent_session_key("Agent:Ops::Discord:Group:1")
    assert parsed == keys.ParsedKey(agent_id="ops", rest="discord:group:1")
    assert keys.parse_agent_session_key("agent:main") is None
    assert keys.parse_agent_session_key("global") is None
    assert keys.parse_agent_session_key("x:main:main") is None
    assert keys.agent_id_of("agent:codex:acp:1") == "codex"
    assert keys.agent_id_of("global") == "main"
    assert keys.agent_id_of("global", default="ops") == "ops"


@pytest.mark.parametrize(
    ("key", "subagent", "acp", "cron", "cron_run", "capable"),
    [
        (f"agent:main:subagent:{UUID}", True, False, False, False, True),
        (f"subagent:{UUID}", True, False, False, False, True),
        (f"agent:codex:acp:{UUID}", False, True, False, False, True),
        (f"acp:{UUID}", False, True, False, False, True),
        ("agent:main:cron:job", False, False, True, False, False),
        ("agent:main:cron:job:run:r1", False, False, True, True, False),
        ("agent:main:cron:job:run:r1:thread:t", False, False, True, False, False),
        (f"agent:main:dashboard:{UUID}", False, False, False, False, False),
        ("agent:main:main", False, False, False, False, False),
        ("agent:main:discord:subagent:x", False, False, False, False, False),
    ],
)
def test_classification(
    key: str, subagent: bool, acp: bool, cron: bool, cron_run: bool, capable: bool
) -> None:
    assert keys.is_subagent_key(key) is subagent
    assert keys.is_acp_key(key) is acp
    assert keys.is_cron_key(key) is cron
    assert keys.is_cron_run_key(key) is cron_run
    assert keys.is_lineage_capable(key) is capable


@pytest.mark.parametrize(
    ("key", "native"),
    [
        (f"agent:main:subagent:{UUID}", True),
        ("agent:ops:subagent:x", True),
        ("agent:main:acp:x", False),
        ("agent:main:subagent:a:b", False),
        ("agent::subagent:x", False),
        ("agent:main:subagent:", False),
        ("subagent:x", False),
        ("agent:main:subagent", False),
        ("xagent:main:subagent:x", False),
    ],
)
def test_native_subagent_rule(key: str, native: bool) -> None:
    assert keys.is_native_subagent_key(key) is native


@pytest.mark.parametrize(
    ("key", "parent"),
    [
        ("agent:main:slack:channel:c1:thread:t1", "agent:main:slack:channel:c1"),
        ("agent:main:main:thread:a:thread:b", "agent:main:main:thread:a"),
        ("agent:main:main", None),
        (":thread:x", None),
        ("agent:main:threads:x", None),
    ],
)
def test_thread_parent_uses_last_marker(key: str, parent: str | None) -> None:
    assert keys.thread_parent_key(key) == parent


def test_thread_session_key_lower_cases_and_canonicalises_base() -> None:
    key = keys.thread_session_key("Agent:Main:Slack:Channel:C1", "TS.1712")
    assert key == "agent:main:slack:channel:c1:thread:ts.1712"
    assert keys.thread_parent_key(key) == "agent:main:slack:channel:c1"
    assert keys.thread_session_key("main", "7") == "agent:main:main:thread:7"
    with pytest.raises(InvalidSessionKey, match="empty part"):
        keys.thread_session_key("main", "")
    with pytest.raises(InvalidSessionKey, match="whitespace"):
        keys.thread_session_key("main", "a b")


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("global", "global"),
        ("unknown", "unknown"),
        ("agent:main:main", "direct"),
        ("agent:main:telegram:direct:u1", "direct"),
        ("agent:main:discord:group:1", "group"),
        ("agent:main:slack:channel:c1", "group"),
        ("agent:main:matrix:room:r1", "group"),
        ("agent:main:slack:channel:c1:thread:t1", "group"),
        ("agent:main:main:thread:group", "direct"),
    ],
)
def test_chat_kind(key: str, kind: str) -> None:
    assert keys.chat_kind(key) == kind


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("global", "main"),
        ("agent:main:main", "main"),
        ("agent:main:cron:nightly", "cron"),
        ("agent:main:hook:1", "hook"),
        ("agent:main:node-abc", "node"),
        ("agent:main:node:abc", "node"),
        ("agent:main:discord:group:1", "group"),
        ("agent:main:slack:channel:c1", "group"),
        (f"agent:main:subagent:{UUID}", "other"),
    ],
)
def test_tool_kind(key: str, kind: str) -> None:
    assert keys.tool_kind(key) == kind


def test_display_key_shows_main_key_as_main() -> None:
    assert keys.display_key("agent:ops:main") == "main"
    assert keys.display_key("agent:ops:work", main_key="work") == "main"
    assert keys.display_key("agent:ops:direct:x") == "agent:ops:direct:x"
    assert keys.display_key("global") == "global"


# --- builders --------------------------------------------------------------------------------


def test_builders() -> None:
    assert keys.main_session_key() == "agent:main:main"
    assert keys.main_session_key("Ops", "Work") == "agent:ops:work"
    assert keys.subagent_session_key("Ops", "ABC") == "agent:ops:subagent:abc"
    assert keys.acp_session_key("codex", UUID) == f"agent:codex:acp:{UUID}"
    assert keys.dashboard_session_key("main", UUID) == f"agent:main:dashboard:{UUID}"
    assert keys.cron_session_key("main", "nightly") == "agent:main:cron:nightly"
    assert keys.cron_run_key("main", "nightly", "R1") == "agent:main:cron:nightly:run:r1"
    assert keys.is_cron_run_key(keys.cron_run_key("main", "j", "r"))


def test_builders_generate_uuid_v4() -> None:
    key = keys.subagent_session_key("main")
    assert keys.is_native_subagent_key(key)
    assert uuid.UUID(key.split(":")[3]).version == 4
    assert keys.subagent_session_key("main") != key


@pytest.mark.parametrize("bad", ["a:b", "a b", "a\x00"])
def test_builders_refuse_bad_child_ids(bad: str) -> None:
    with pytest.raises(InvalidSessionKey, match="bad subagent id"):
        keys.subagent_session_key("main", bad)


def test_builders_refuse_bad_agent_ids() -> None:
    with pytest.raises(InvalidField, match=r'Invalid agentId "-x"'):
        keys.subagent_session_key("-x", "c")


# --- agent ids -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("main", True),
        ("MAIN", True),
        ("a", True),
        ("0", True),
        ("a_b-c9", True),
        ("a" * 64, True),
        ("a" * 65, False),
        ("", False),
        ("-a", False),
        ("_a", False),
        ("a.b", False),
        ("a b", False),
        ("a:b", False),
        ("é", False),
    ],
)
def test_agent_id_rule(value: str, valid: bool) -> None:
    assert keys.is_valid_agent_id(value) is valid


def test_normalize_agent_id() -> None:
    assert keys.normalize_agent_id(" Codex ") == "codex"
    with pytest.raises(InvalidField) as caught:
        keys.normalize_agent_id("bad id")
    assert str(caught.value) == (
        'Invalid agentId "bad id". Agent IDs must match [a-z0-9][a-z0-9_-]{0,63}.'
    )


@pytest.mark.parametrize(
    ("value", "sanitized"),
    [
        ("Main", "main"),
        ("My Agent", "my-agent"),
        ("--x--", "x"),
        ("a.b.c", "a-b-c"),
        ("", "main"),
        ("!!!", "main"),
        ("_x", "main"),
        ("x" * 100, "x" * 64),
        ("Ünïcode", "n-code"),
    ],
)
def test_sanitize_agent_id(value: str, sanitized: str) -> None:
    assert keys.sanitize_agent_id(value) == sanitized
    assert keys.is_valid_agent_id(keys.sanitize_agent_id(value))


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (None, "invalid session key: must be a string"),
        (42, "invalid session key: must be a string"),
        (b"agent:main:main", "invalid session key: must be a string"),
        ("agent:main:a b", "invalid session key: whitespace or control characters are not allowed"),
        (
            "agent:main:a\tb",
            "invalid session key: whitespace or control characters are not allowed",
        ),
        (
            "agent:main:a\x00",
            "invalid session key: whitespace or control characters are not allowed",
        ),
        (
            "agent:main:a\x1fb",
            "invalid session key: whitespace or control characters are not allowed",
        ),
        (
            "agent:main:a\x7f",
            "invalid session key: whitespace or control characters are not allowed",
        ),
        (
            "agent:main:a\u2028b",
            "invalid session key: whitespace or control characters are not allowed",
        ),
        ("agent::main", "invalid session key: empty part in 'agent::main'"),
        ("agent:main:", "invalid session key: empty part in 'agent:main:'"),
        (":x", "invalid session key: empty part in ':x'"),
        ("a::b", "invalid session key: empty part in 'a::b'"),
        ("agent:x", "invalid session key: 'agent:x' needs the form agent:<agentId>:<rest>"),
        ("agent", "invalid session key: 'agent' needs the form agent:<agentId>:<rest>"),
        ("agent:-x:main", "invalid session key: agent id '-x' must match [a-z0-9][a-z0-9_-]{0,63}"),
        ("agent:a.b:main", "invalid session key: agent id 'a.b' must match"),
        (f"agent:{'a' * 65}:main", "invalid session key: agent id"),
        ("agent:main:" + "x" * 502, "invalid session key: too long (max 512)"),
        ("x" * 502, "invalid session key: too long (max 512)"),
    ],
)
def test_malformed_keys(raw: object, message: str) -> None:
    with pytest.raises(InvalidSessionKey) as caught:
        keys.canonicalize(raw)
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, InvalidInput)


def test_length_bound_is_inclusive() -> None:
    at_limit = "agent:main:" + "x" * (keys.MAX_KEY_LENGTH - len("agent:main:"))
    assert keys.canonicalize(at_limit) == at_limit
    with pytest.raises(InvalidSessionKey, match="too long"):
        keys.canonicalize(at_limit + "x")
    # the bound applies to the canonical form, after the default agent is prefixed
    bare = "x" * (keys.MAX_KEY_LENGTH - len("agent:main:"))
    assert len(keys.canonicalize(bare)) == keys.MAX_KEY_LENGTH
    with pytest.raises(InvalidSessionKey, match="too long"):
        keys.canonicalize(bare + "x")


def test_whitespace_message_names_the_key() -> None:
    with pytest.raises(InvalidSessionKey) as caught:
        keys.canonicalize("agent:main:a b")
    assert str(caught.value) == (
        "invalid session key: whitespace or control characters are not allowed: 'agent:main:a b'"
    )


# --- session ids -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [UUID, "a", "0.b_c-d", "a" * 128])
def test_valid_session_ids(value: str) -> None:
    assert keys.validate_session_id(value) == value


@pytest.mark.parametrize(
    "value", ["", "A", "Abc", "-a", ".a", "a/b", "a b", "../x", "a" * 129, "é"]
)
def test_invalid_session_ids(value: str) -> None:
    with pytest.raises(InvalidField) as caught:
        keys.validate_session_id(value)
    assert str(caught.value) == f"Invalid session ID: {value}"


def test_new_session_id_is_uuid_v4_and_valid() -> None:
    value = keys.new_session_id()
    assert uuid.UUID(value).version == 4
    assert keys.validate_session_id(value) == value
    assert re.fullmatch(r"[0-9a-f-]{36}", value)


# --- regressions of bugs found and fixed ----------------------------------------------------


def test_session_id_with_trailing_newline_is_refused() -> None:
    with pytest.raises(InvalidField):
        keys.validate_session_id("abc\n")


def test_agent_id_with_trailing_newline_is_invalid() -> None:
    assert not keys.is_valid_agent_id("main\n")


def test_canonical_agent_key_never_exceeds_max_length() -> None:
    raw = "agent:main:" + "\u0130" * 400  # 'İ'.lower() is two code points
    try:
        canonical = keys.canonicalize(raw)
    except InvalidSessionKey:
        return
    assert len(canonical) <= keys.MAX_KEY_LENGTH
    assert keys.canonicalize(canonical) == canonical


def test_main_alias_follows_the_configured_main_key() -> None:
    # OpenClaw's normalisation: "empty or `main` request key -> agent main key"
    assert keys.canonicalize("main", main_key="work") == "agent:main:work"


def test_builders_only_build_canonical_keys() -> None:
    try:
        key = keys.subagent_session_key("main", "x" * 600)
    except InvalidSessionKey:
        return
    assert keys.canonicalize(key) == key
