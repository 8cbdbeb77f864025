"""Properties of :func:`clawline.acp.jsonrpc_envelope.decode` over generated lines (pure, no
process).

For any line: ``decode`` never raises; a refusal's answer is a valid ACP error response that
carries the line's id exactly when that id is valid; what passes is a JSON-RPC 2.0 request,
notification or response the SDK can dispatch without a type error.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from clawline.acp.jsonrpc_envelope import PARSE_ERROR, Dropped, Refusal, decode, is_request_id
from tests.acp.schema_check import check_message

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
MEMBERS = {
    "jsonrpc": st.just("2.0") | JSON_VALUES,
    "id": st.integers(min_value=-(2**63), max_value=2**64 - 1) | JSON_VALUES,
    "method": st.sampled_from(["initialize", "session/list", "session/cancel"]) | JSON_VALUES,
    "params": st.just({}) | JSON_VALUES,
    "result": JSON_VALUES,
    "error": JSON_VALUES,
}
ENVELOPES = st.fixed_dictionaries({}, optional=MEMBERS) | JSON_VALUES


def _encoded(value: Any) -> bytes:
    return orjson.dumps(value)


@settings(max_examples=300, deadline=None)
@given(ENVELOPES)
def test_decode_of_any_json_value(value: Any) -> None:
    decoded = decode(_encoded(value))
    if isinstance(decoded, Refusal):
        answer = decoded.answer()
        assert check_message("agent", answer, None) is None
        has_valid_id = isinstance(value, dict) and "id" in value and is_request_id(value["id"])
        assert answer["id"] == (value["id"] if has_valid_id else None)
        return
    assert isinstance(value, dict)
    if isinstance(decoded, Dropped):
        assert "method" not in value
        assert "result" in value or "error" in value
        return
    assert decoded == value
    assert value["jsonrpc"] == "2.0"
    if "method" in value:
        assert isinstance(value["method"], str)
        assert value.get("params") is None or isinstance(value["params"], dict | list)
    else:
        assert ("result" in value) != ("error" in value)
    assert "id" not in value or is_request_id(value["id"])


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_decode_of_any_bytes(line: bytes) -> None:
    decoded = decode(line)
    if isinstance(decoded, Refusal):
        assert check_message("agent", decoded.answer(), None) is None
        try:
            orjson.loads(line)
        except orjson.JSONDecodeError:
            assert decoded.code == PARSE_ERROR
            assert decoded.id is None
