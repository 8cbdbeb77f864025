"""Property tests of the key grammar."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from clawline import keys
from clawline.errors import InvalidSessionKey

AGENT_IDS = st.from_regex(r"\A[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}\Z")
PART = st.text(
    alphabet=st.characters(
        exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), exclude_characters=":"
    ),
    min_size=1,
    max_size=12,
)
# Parts drawn from a key-ish alphabet so the interesting branches (agent:, main, global,
# thread markers, upper case) are hit often.
WORD = (
    st.sampled_from(
        [
            "agent",
            "main",
            "Main",
            "global",
            "unknown",
            "subagent",
            "acp",
            "cron",
            "run",
            "thread",
            "dashboard",
            "direct",
            "group",
            "ops",
            "Codex",
            "x",
            "1",
        ]
    )
    | PART
)
KEYISH = st.lists(WORD, min_size=1, max_size=7).map(":".join)
JUNK = (
    st.text(max_size=40)
    | KEYISH
    | st.lists(st.sampled_from(["", ":", " ", "agent", "x"]), max_size=8).map("".join)
)


def check_canonical(key: str) -> None:
    """The invariants every canonical key satisfies."""
    assert key == key.lower()
    assert len(key) <= keys.MAX_KEY_LENGTH
    if key in ("global", "unknown"):
        return
    parts = key.split(":")
    assert "" not in parts
    assert parts[0] == "agent"
    assert keys.is_valid_agent_id(parts[1])
    parsed = keys.parse_agent_session_key(key)
    assert parsed is not None
    assert f"agent:{parsed.agent_id}:{parsed.rest}" == key


@given(KEYISH)
def test_canonicalize_is_idempotent_and_canonical(raw: str) -> None:
    try:
        canonical = keys.canonicalize(raw)
    except InvalidSessionKey:
        return
    check_canonical(canonical)
    assert keys.canonicalize(canonical) == canonical


@given(JUNK | st.none() | st.integers() | st.binary(max_size=8))
def test_junk_canonicalizes_or_raises_invalid_session_key(raw: object) -> None:
    try:
        canonical = keys.canonicalize(raw)
    except InvalidSessionKey as error:
        message = str(error)
    else:
        check_canonical(canonical)
        assert keys.canonicalize(canonical) == canonical
        return
    assert message.startswith("invalid session key: ")


@given(AGENT_IDS, st.uuids(version=4))
def test_any_valid_agent_id_builds_a_native_subagent_key(agent: str, child: object) -> None:
    key = keys.subagent_session_key(agent, str(child))
    assert keys.is_native_subagent_key(key)
    assert keys.is_subagent_key(key)
    assert keys.is_lineage_capable(key)
    assert keys.canonicalize(key) == key
    assert keys.agent_id_of(key) == agent.lower()
    check_canonical(key)


@given(AGENT_IDS)
def test_valid_agent_ids_survive_sanitizing(agent: str) -> None:
    assert keys.is_valid_agent_id(agent)
    assert keys.sanitize_agent_id(agent) == agent.lower()
    assert keys.normalize_agent_id(agent) == agent.lower()


@given(st.text(max_size=80))
def test_sanitize_agent_id_always_returns_a_valid_id(value: str) -> None:
    assert keys.is_valid_agent_id(keys.sanitize_agent_id(value))


THREAD_IDS = st.text(
    alphabet=st.characters(categories=("Ll", "Lu", "Nd"), include_characters="._-"),
    min_size=1,
    max_size=20,
)


@given(KEYISH, THREAD_IDS)
def test_thread_parent_key_inverts_thread_session_key(base: str, thread_id: str) -> None:
    try:
        canonical_base = keys.canonicalize(base)
        key = keys.thread_session_key(base, thread_id)
    except InvalidSessionKey:
        return
    if canonical_base in ("global", "unknown"):
        return  # the literal buckets are not agent keys; see the report
    assert keys.thread_parent_key(key) == canonical_base
    assert key.rsplit(":", 1)[1] == thread_id.lower()


def restated_native_rule(key: str) -> bool:
    parts = key.split(":")
    if len(parts) != 4:
        return False
    prefix, agent, kind, child = parts
    return prefix == "agent" and kind == "subagent" and len(agent) > 0 and len(child) > 0


NATIVE_ISH = st.lists(
    st.sampled_from(["agent", "subagent", "acp", "", "main", "x", "Agent", "SUBAGENT", " "]),
    min_size=0,
    max_size=6,
).map(":".join)


@given(NATIVE_ISH | st.text(max_size=30))
def test_native_rule_agrees_with_restatement(key: str) -> None:
    assert keys.is_native_subagent_key(key) is restated_native_rule(key)
