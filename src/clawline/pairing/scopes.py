"""Operator scopes: the names, their implication (admin ⊃ write ⊃ read), and capping.

What a connection may do is granted in scopes; device pairing (:mod:`clawline.pairing`) caps a
paired device's with :func:`cap_scopes`, and the gateway checks each method's scope with
:func:`has_scope` (:mod:`clawline.gateway.handshake` re-exports the names).
"""

from __future__ import annotations

from collections.abc import Iterable

READ, WRITE, ADMIN = "operator.read", "operator.write", "operator.admin"
APPROVALS, QUESTIONS, PAIRING = "operator.approvals", "operator.questions", "operator.pairing"
# Known so a connection gets them as asked (OpenClaw's Control UI asks for all three), though
# clawline has none of their features: docs/security.md, "Scopes clawline has no features for".
OPERATOR_SCOPES = (
    READ,
    WRITE,
    ADMIN,
    APPROVALS,
    QUESTIONS,
    PAIRING,
    "operator.talk.secrets",
)
_IMPLIED = {ADMIN: (READ, WRITE, ADMIN), WRITE: (READ, WRITE), READ: (READ,)}


def has_scope(granted: frozenset[str], required: str) -> bool:
    """``operator.admin`` implies write and read; ``operator.write`` implies read."""
    return any(required in _IMPLIED.get(scope, (scope,)) for scope in granted)


def implied_scopes(scopes: Iterable[str]) -> frozenset[str]:
    """``scopes`` with every scope they imply."""
    return frozenset(implied for scope in scopes for implied in _IMPLIED.get(scope, (scope,)))


def known_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """The operator scopes among ``scopes``, each once, in the order given."""
    return tuple(dict.fromkeys(scope for scope in scopes if scope in OPERATOR_SCOPES))


def cap_scopes(requested: Iterable[str], granted: Iterable[str]) -> frozenset[str]:
    """What a connection asking for ``requested`` gets under a grant of ``granted``.

    A requested scope the grant covers (with implication) is kept as asked; one it does not
    cover is replaced by the scopes it implies that the grant covers: asking for
    ``operator.admin`` under a grant of ``operator.write`` gives read and write.
    """
    allowed = implied_scopes(granted)
    kept: set[str] = set()
    for scope in known_scopes(requested):
        if scope in allowed:
            kept.add(scope)
        else:
            kept.update(implied for implied in _IMPLIED.get(scope, ()) if implied in allowed)
    return frozenset(kept)
