"""CursorCodec: round trips and every way a cursor is refused."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clawline.errors import InvalidCursor, InvalidInput
from clawline.store.base import SessionQuery
from clawline.store.cursor import CURSOR_VERSION, MAX_CURSOR_LENGTH, CursorCodec, Position

SECRET = b"k" * 32
FP = SessionQuery().fingerprint()
CODEC = CursorCodec(SECRET)
MALFORMED = "invalid cursor: malformed"
SIGNATURE = "invalid cursor: signature mismatch (tampered with, or from another store)"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def payload_of(cursor: str) -> dict[str, object]:
    loaded: dict[str, object] = json.loads(
        base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    )
    return loaded


def reencode(payload: dict[str, object]) -> str:
    return b64(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode())


def refused(
    cursor: object, message: str, fingerprint: str = FP, codec: CursorCodec = CODEC
) -> None:
    with pytest.raises(InvalidCursor) as caught:
        codec.decode(cursor, fingerprint)
    assert str(caught.value) == message
    assert isinstance(caught.value, InvalidInput)


GOOD = CODEC.encode(Position(1_790_000_000_000, "agent:main:subagent:abc"), FP)


# --- round trip ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "position",
    [
        Position(0, "global"),
        Position(1_790_000_000_000, "agent:main:main"),
        Position(2**53, "agent:main:slack:channel:c1:thread:t"),
        Position(-5, "agent:main:ünïcode"),
    ],
)
def test_round_trip(position: Position) -> None:
    cursor = CODEC.encode(position, FP)
    assert CODEC.decode(cursor, FP) == position
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_cursor_shape() -> None:
    payload = payload_of(GOOD)
    assert list(payload) == ["v", "u", "k", "q", "s"]
    assert payload["v"] == CURSOR_VERSION == 2
    assert payload["q"] == FP


def test_same_secret_same_cursor() -> None:
    position = Position(1, "agent:main:main")
    assert CursorCodec(SECRET).encode(position, FP) == CODEC.encode(position, FP)


@given(st.integers(min_value=-(2**63), max_value=2**63), st.text(min_size=1, max_size=200))
def test_round_trip_property(updated_at: int, key: str) -> None:
    position = Position(updated_at, key)
    try:
        cursor = CODEC.encode(position, FP)
    except UnicodeEncodeError:
        return  # lone surrogates cannot be keys
    if len(cursor) <= MAX_CURSOR_LENGTH:
        assert CODEC.decode(cursor, FP) == position


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cursor",
    [
        None,
        5,
        b"abc",
        "",
        "!!!!",
        "a",
        "not base64 at all",
        "x" * (MAX_CURSOR_LENGTH + 1),
        b64(b"not json"),
        b64(b"[1,2]"),
        b64(b'"v"'),
        b64(b"{}"),
        b64(b'{"u":1}'),
        b64(b"\xff\xfe"),
        GOOD + "=",
        GOOD + "==",
        GOOD[:5] + "+" + GOOD[6:],
        GOOD[:5] + "/" + GOOD[6:],
        "é" + GOOD,
        GOOD[:-3],
    ],
)
def test_malformed(cursor: object) -> None:
    refused(cursor, MALFORMED)


def test_openclaw_offset_cursor_is_an_unsupported_version() -> None:
    openclaw = "eyJ2IjoxLCJvZmZzZXQiOjEwMH0"
    assert base64.urlsafe_b64decode(openclaw + "=") == b'{"v":1,"offset":100}'
    refused(openclaw, "invalid cursor: unsupported version")


@pytest.mark.parametrize("version", [1, 3, 0, "2", None, True, [2]])
def test_other_versions(version: object) -> None:
    payload = payload_of(GOOD)
    payload["v"] = version
    refused(reencode(payload), "invalid cursor: unsupported version")


@pytest.mark.parametrize(
    "change",
    [
        {"extra": 1},
        {"u": "1"},
        {"u": 1.5},
        {"u": True},
        {"u": None},
        {"k": 5},
        {"q": None},
        {"s": 5},
    ],
)
def test_wrong_fields_are_malformed(change: dict[str, object]) -> None:
    payload = payload_of(GOOD)
    payload.update(change)
    refused(reencode(payload), MALFORMED)


def test_missing_field_is_malformed() -> None:
    payload = payload_of(GOOD)
    del payload["s"]
    refused(reencode(payload), MALFORMED)


@pytest.mark.parametrize(
    "change", [{"u": 1}, {"k": "agent:main:other"}, {"s": "AAAAAAAAAAAAAAAAAAAAAA"}]
)
def test_tampered(change: dict[str, object]) -> None:
    payload = payload_of(GOOD)
    payload.update(change)
    refused(reencode(payload), SIGNATURE)


def test_rebinding_to_another_query_breaks_the_signature() -> None:
    other = SessionQuery(agent_id="ops").fingerprint()
    payload = payload_of(GOOD)
    payload["q"] = other
    refused(reencode(payload), SIGNATURE, fingerprint=other)


def test_cursor_from_another_secret() -> None:
    refused(GOOD, SIGNATURE, codec=CursorCodec(b"another secret"))


def test_cursor_for_another_query() -> None:
    other = SessionQuery(agent_id="ops").fingerprint()
    assert other != FP
    refused(GOOD, "invalid cursor: it belongs to a different query", fingerprint=other)


def test_non_canonical_json_is_malformed() -> None:
    payload = payload_of(GOOD)
    spaced = b64(json.dumps(payload).encode())  # default separators add spaces
    refused(spaced, MALFORMED)
    escaped = CODEC.encode(Position(1, "agent:main:é"), FP)
    ascii_form = b64(json.dumps(payload_of(escaped), separators=(",", ":")).encode())
    assert ascii_form != escaped
    refused(ascii_form, MALFORMED)
    duplicated = b64(
        json.dumps(payload, separators=(",", ":")).replace('{"v":2', '{"v":2,"v":2').encode()
    )
    refused(duplicated, MALFORMED)


def test_non_canonical_base64_is_malformed() -> None:
    raw = base64.urlsafe_b64decode(GOOD + "=" * (-len(GOOD) % 4))
    assert len(raw) % 3 != 0  # the last symbol carries unused bits
    last = GOOD[-1]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    twin = next(
        GOOD[:-1] + ch
        for ch in alphabet
        if ch != last and base64.urlsafe_b64decode(GOOD[:-1] + ch + "=" * (-len(GOOD) % 4)) == raw
    )
    refused(twin, MALFORMED)
    refused(GOOD[:10] + "\n" + GOOD[10:], MALFORMED)


# --- only InvalidCursor, whatever comes in ---------------------------------------------------


def decode_or_invalid(cursor: object) -> None:
    """Decoding succeeds or raises InvalidCursor; anything else fails the test."""
    message = "invalid cursor: "
    try:
        CODEC.decode(cursor, FP)
    except InvalidCursor as error:
        message = str(error)
    assert message.startswith("invalid cursor: ")


@given(st.text(max_size=300))
def test_random_text_only_raises_invalid_cursor(cursor: str) -> None:
    decode_or_invalid(cursor)


@given(st.binary(max_size=300))
def test_random_base64_only_raises_invalid_cursor(data: bytes) -> None:
    decode_or_invalid(b64(data))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
CURSORISH = st.fixed_dictionaries(
    {},
    optional={
        "v": st.sampled_from([1, 2, 2.0, "2", True]) | JSON_VALUES,
        "u": st.integers() | JSON_VALUES,
        "k": st.text(max_size=20) | JSON_VALUES,
        "q": st.just(FP) | JSON_VALUES,
        "s": st.text(max_size=22) | JSON_VALUES,
        "offset": st.integers(),
    },
)


@given(CURSORISH | JSON_VALUES)
def test_random_json_only_raises_invalid_cursor(payload: object) -> None:
    decode_or_invalid(
        reencode(payload) if isinstance(payload, dict) else b64(json.dumps(payload).encode())
    )


# --- regressions of bugs found and fixed ----------------------------------------------------


def test_lone_surrogate_escape_is_malformed() -> None:
    refused(b64(b'{"v":2,"u":1,"k":"\\ud800","q":"x","s":"y"}'), MALFORMED)


def test_deeply_nested_json_is_malformed() -> None:
    refused(b64(b"[" * 1500), MALFORMED)


@pytest.mark.parametrize("variant", ["reordered", "float-version"])
def test_non_canonical_payloads_are_malformed(variant: str) -> None:
    payload = payload_of(GOOD)
    if variant == "reordered":
        payload = dict(reversed(list(payload.items())))
    else:
        payload["v"] = 2.0
    refused(reencode(payload), MALFORMED)
