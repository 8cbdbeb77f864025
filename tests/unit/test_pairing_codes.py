"""Pairing codes (clawline.pairing.codes) and scope capping (clawline.pairing.scopes)."""

from __future__ import annotations

import re

import pytest

from clawline.pairing.codes import code_digest, new_code, normalize_code
from clawline.pairing.scopes import ADMIN, READ, WRITE, cap_scopes
from clawline.records.pairing import InvalidPairingCode

APPROVALS = "operator.approvals"


def test_new_codes_are_short_random_and_readable() -> None:
    codes = {new_code() for _ in range(2000)}
    # 30 random bits: a repeat or two among 2000 is possible (p ~ 0.002), many are not
    assert len(codes) >= 1995
    for code in codes:
        assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{3}-[0-9A-HJKMNP-TV-Z]{3}", code), code
        assert normalize_code(code) == code.replace("-", "")


@pytest.mark.parametrize(
    ("typed", "code"),
    [("7qx-4kd", "7QX4KD"), (" 7QX 4KD ", "7QX4KD"), ("7QX4KD", "7QX4KD"), ("o1l-IAB", "0111AB")],
)
def test_typing_is_forgiven(typed: str, code: str) -> None:
    assert normalize_code(typed) == code


@pytest.mark.parametrize("text", ["", "7QX-4K", "7QX-4KDD", "7QU-4KD", "7QX_4KD", "\uff17QX-4KD"])
def test_what_is_not_a_code_is_refused(text: str) -> None:
    with pytest.raises(InvalidPairingCode, match="not a pairing code"):
        normalize_code(text)


def test_the_digest_is_keyed() -> None:
    one, other = b"a" * 32, b"b" * 32
    assert code_digest(one, "7QX4KD") == code_digest(one, "7QX4KD")
    assert code_digest(one, "7QX4KD") != code_digest(other, "7QX4KD")
    assert code_digest(one, "7QX4KD") != code_digest(one, "7QX4KE")
    assert "7QX4KD" not in code_digest(one, "7QX4KD").upper()


@pytest.mark.parametrize(
    ("requested", "granted", "result"),
    [
        ((ADMIN,), (ADMIN,), {ADMIN}),
        ((ADMIN,), (WRITE,), {READ, WRITE}),
        ((ADMIN,), (READ,), {READ}),
        ((READ, WRITE), (ADMIN,), {READ, WRITE}),
        ((READ, WRITE), (READ,), {READ}),
        ((WRITE, APPROVALS), (WRITE,), {WRITE}),
        ((APPROVALS,), (APPROVALS, READ), {APPROVALS}),
        ((READ, "operator.root"), (ADMIN,), {READ}),
        ((), (ADMIN,), set()),
        ((ADMIN,), (), set()),
    ],
)
def test_scopes_are_capped_by_the_grant(
    requested: tuple[str, ...], granted: tuple[str, ...], result: set[str]
) -> None:
    assert cap_scopes(requested, granted) == frozenset(result)
