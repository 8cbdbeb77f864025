"""A plugin's gateway methods as the plugin API describes them: the call a handler receives
(:class:`MethodCall`), the handler (:data:`MethodHandler`), the refusal it may raise with a
protocol error code (:class:`MethodError`), and the operator scopes a method may require
(:data:`READ`, :data:`WRITE`, :data:`ADMIN`).

The gateway's ``Call`` is a :class:`MethodCall`, and the gateway answers a :class:`MethodError`
as a request error ``{code, message, details}`` (a test holds both to the gateway), the details
naming the category and ``errorClass: "MethodError"``. Any other
:class:`~clawline.errors.ClawlineError` a handler raises is answered with the code of its
category (:data:`clawline.errors.CATEGORY_CODES`), ``details.errorType`` the category and
``details.errorClass`` its class.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol, TypeAlias, get_args, runtime_checkable

from clawline.errors import ClawlineError
from clawline.types import JSON

MethodErrorCode: TypeAlias = Literal["INVALID_REQUEST", "UNAVAILABLE", "CONFLICT"]
"""The protocol error codes a plugin's method may answer with (OpenClaw's names)."""

METHOD_ERROR_CODES: frozenset[str] = frozenset(get_args(MethodErrorCode))

MethodHandler: TypeAlias = Callable[[Any], Awaitable[Any]]
"""``async (call) -> JSON``: answers one request; ``call`` is a :class:`MethodCall` (the
gateway's ``Call``, typed ``Any`` here so that the gateway's own handlers fit too)."""


@runtime_checkable
class MethodCall(Protocol):
    """One request a method handler answers, as a plugin may use it."""

    @property
    def params(self) -> dict[str, Any]:
        """The request's params: an object, checked against the method's schema if it has
        one (``{}`` when the request sent none)."""
        ...

    @property
    def method(self) -> str:
        """The method name the request called."""
        ...

    @property
    def request_id(self) -> str:
        """The request's id (its response carries it)."""
        ...


class MethodError(ClawlineError):
    """A method's refusal answered with the protocol error ``code``: ``INVALID_REQUEST``
    (the default), ``UNAVAILABLE`` or ``CONFLICT``. ``details`` rides along in the error
    object (``None``: none). Another code is a ``ValueError``."""

    client_fault = True

    def __init__(
        self, message: str, code: MethodErrorCode = "INVALID_REQUEST", *, details: JSON = None
    ) -> None:
        if code not in METHOD_ERROR_CODES:
            raise ValueError(f"unknown method error code: {code!r}")
        super().__init__(message)
        self.code: MethodErrorCode = code
        self.details = details
