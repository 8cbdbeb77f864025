"""Closed parameter schemas: every rule accepts what it should and names what it refuses."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clawline.errors import ClawlineError
from clawline.gateway.frames import ErrorCode, GatewayError
from clawline.gateway.params import P, check

SCHEMA = {
    "key": P.string(required=True, min_len=1, max_len=8),
    "limit": P.integer(min=1, max=100),
    "ratio": P.number(min=0, max=1),
    "flag": P.boolean(),
    "label": P.string(nullable=True, max_len=4),
    "mode": P.string(choices=("a", "b")),
    "opts": P.object(),
    "tags": P.array(P.string(max_len=3), max_len=2),
    "extra": P.anything(),
}


def refused(params: object, schema: Any = SCHEMA) -> str:
    with pytest.raises(GatewayError) as caught:
        check("demo", params, schema)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    return caught.value.message


def test_valid_params_come_back_unchanged() -> None:
    params = {
        "key": "k",
        "limit": 100,
        "ratio": 0.5,
        "flag": False,
        "label": None,
        "mode": "b",
        "opts": {"any": ["thing"]},
        "tags": ["x", "yz"],
        "extra": None,
    }
    assert check("demo", params, SCHEMA) == params


def test_none_params_count_as_an_empty_object() -> None:
    assert check("demo", None, {"limit": P.integer()}) == {}


@pytest.mark.parametrize("params", [[], "x", 3, True, 1.5])
def test_params_must_be_an_object(params: object) -> None:
    assert refused(params) == "invalid demo params: params must be an object"


def test_an_unknown_key_is_refused_by_name() -> None:
    assert refused({"key": "k", "bogus": 1}) == "invalid demo params: unknown key 'bogus'"


def test_a_missing_required_key_is_refused() -> None:
    assert refused({}) == "invalid demo params: key is required"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"key": None}, "key must not be null"),
        ({"key": 1}, "key must be a string"),
        ({"key": ""}, "key must have at least 1 characters"),
        ({"key": "x" * 9}, "key must have at most 8 characters"),
        ({"key": "k", "limit": "5"}, "limit must be an integer"),
        ({"key": "k", "limit": True}, "limit must be an integer"),
        ({"key": "k", "limit": 1.0}, "limit must be an integer"),
        ({"key": "k", "limit": 0}, "limit must be >= 1"),
        ({"key": "k", "limit": 101}, "limit must be <= 100"),
        ({"key": "k", "ratio": True}, "ratio must be a number"),
        ({"key": "k", "ratio": 1.5}, "ratio must be <= 1"),
        ({"key": "k", "flag": 0}, "flag must be a boolean"),
        ({"key": "k", "label": "x" * 5}, "label must have at most 4 characters"),
        ({"key": "k", "mode": "c"}, "mode must be one of 'a', 'b'"),
        ({"key": "k", "opts": []}, "opts must be an object"),
        ({"key": "k", "tags": "x"}, "tags must be an array"),
        ({"key": "k", "tags": ["a", "b", "c"]}, "tags must have at most 2 items"),
        ({"key": "k", "tags": ["a", 1]}, "tags[1] must be a string"),
        ({"key": "k", "tags": ["long"]}, "tags[0] must have at most 3 characters"),
    ],
)
def test_each_rule_names_the_offending_key(params: dict[str, Any], message: str) -> None:
    assert refused(params) == f"invalid demo params: {message}"


def test_number_accepts_integers_and_floats() -> None:
    assert check("demo", {"key": "k", "ratio": 1}, SCHEMA)["ratio"] == 1
    assert check("demo", {"key": "k", "ratio": 0.25}, SCHEMA)["ratio"] == 0.25


def test_anything_accepts_null_and_any_value() -> None:
    for value in (None, 1, "x", [1], {"a": None}):
        assert check("demo", {"key": "k", "extra": value}, SCHEMA)["extra"] == value


def test_gateway_errors_are_clawline_errors() -> None:
    assert issubclass(GatewayError, ClawlineError)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=6))
def test_check_accepts_or_refuses_with_a_typed_error_and_never_mutates(
    params: dict[str, Any],
) -> None:
    before = repr(params)
    refusal: GatewayError | None = None
    try:
        result = check("demo", params, SCHEMA)
    except GatewayError as error:
        refusal = error
    if refusal is not None:
        assert refusal.code is ErrorCode.INVALID_REQUEST
        assert refusal.message.startswith("invalid demo params: ")
    else:
        assert set(result) <= set(SCHEMA)
        assert "key" in result
    assert repr(params) == before
