"""The exception tree of clawline.

Every error clawline raises on purpose is a :class:`ClawlineError`, and every one sits under
exactly one **category**, named by what the caller can do about it (a test walks the package and
holds every class to this)::

    ClawlineError
    ├── InvalidInput ................ fix the request: it was malformed or broke a rule;
    │   │                             nothing was changed
    │   ├── InvalidSessionKey, InvalidLabel, InvalidField, InvalidCursor
    │   ├── LineageError ─ LineageFieldNotSupported, LineageImmutable, LineageCycle
    │   └── (elsewhere) ConfigError, ConfinedPathError …, DeviceAuthError, DeviceKeyError,
    │       InvalidPairingCode, DeviceRevoked, InvalidTaskTransition, XWorkmateError,
    │       AttachmentRefused, ArgumentError, TargetError, ChildRefused, FrameError
    ├── NotFound .................... name something that exists
    │   ├── SessionNotFound
    │   └── (elsewhere) TaskNotFound, PairingNotFound, EventsNotRetained, NotRunning
    ├── Conflict .................... the request clashes with what is stored: look again
    │   ├── LabelInUse
    │   └── (elsewhere) AlreadySpawned, ChildLimitReached, XWorkmateConflict
    ├── Unavailable ................. try again later: a part is busy, stopping or unreachable
    │   ├── StoreUnavailable ─ StoreInUse, StoreLockLost (clawline.store.instance_lock),
    │   │                      StoreTimeout
    │   ├── AcpAgentError
    │   └── (elsewhere) AcpClientError, ProviderError, RunsClosed, StartFailed,
    │       XWorkmateNotStarted,
    │       ClientError ─ ConnectError, ConnectionLost, Timeout
    └── Internal .................... nothing the caller can do: a bug or a broken installation
        └── StoreError ─ MigrationError

Errors that carry a protocol answer decide their category by their code rather than by their
class: the gateway's :class:`~clawline.gateway.frames.GatewayError`, a plugin method's
:class:`~clawline.plugins.methods.MethodError` and the gateway client's
:class:`~clawline.client.client_errors.ClientError` tree (a gateway's answer read back, or the
client's own ``UNAVAILABLE`` / ``TIMEOUT``). Their
:attr:`ClawlineError.category` is the one their ``details.errorType`` names, else the category
of their code (:data:`CODE_CATEGORIES`); they are the only classes without a category ancestor.

:data:`CATEGORY_CODES` maps each category to its gateway error code (OpenClaw's codes: a missing
session is ``INVALID_REQUEST`` there too); the gateway answers with that code and the category
in ``details.errorType`` (the class in ``details.errorClass``), so a client decides on those,
never on the message text.

``str(error)`` is the exact, user-facing message. Where OpenClaw has an exact error string for a
case, the message is that string, so clients written against OpenClaw keep working.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "CATEGORIES",
    "CATEGORY_CODES",
    "CODE_CATEGORIES",
    "AcpAgentError",
    "ClawlineError",
    "Conflict",
    "Internal",
    "InvalidCursor",
    "InvalidField",
    "InvalidInput",
    "InvalidLabel",
    "InvalidSessionKey",
    "LabelInUse",
    "LineageCycle",
    "LineageError",
    "LineageFieldNotSupported",
    "LineageImmutable",
    "MigrationError",
    "NotFound",
    "SessionNotFound",
    "StoreError",
    "StoreTimeout",
    "StoreUnavailable",
    "Unavailable",
    "category_of",
]


class ClawlineError(Exception):
    """Base of every error clawline raises on purpose. ``client_fault``: the error refuses what
    a client asked for (logged as routine traffic, :mod:`clawline.failure_log`)."""

    client_fault: ClassVar[bool] = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    @property
    def category(self) -> type[ClawlineError]:
        """The error's category (module docstring)."""
        return category_of(self)


class InvalidInput(ClawlineError):
    """The input was malformed or broke a rule; nothing was written."""

    client_fault = True


class InvalidSessionKey(InvalidInput):
    """A session key does not follow the key grammar."""


class InvalidLabel(InvalidInput):
    """A label is not a string, is empty after trimming, or is too long."""


class InvalidField(InvalidInput):
    """A field of a session entry or a request has an invalid value."""


class InvalidCursor(InvalidInput):
    """A paging cursor is malformed, tampered with, or belongs to another query."""


class LineageError(InvalidInput):
    """A change to the lineage fields of a session was refused."""


class LineageFieldNotSupported(LineageError):
    """Lineage fields were set on a key that is not a ``subagent:`` or ``acp:`` session."""


class LineageImmutable(LineageError):
    """A lineage field that is already set was cleared or changed."""


class LineageCycle(LineageError):
    """Setting a parent would make a session its own ancestor."""


class NotFound(ClawlineError):
    """The thing named does not exist."""

    client_fault = True


class SessionNotFound(NotFound):
    """No session has the given key."""


class Conflict(ClawlineError):
    """The request clashes with what is already stored."""

    client_fault = True


class LabelInUse(Conflict):
    """Another session of the same agent already carries the label."""


class Unavailable(ClawlineError):
    """A part that is needed is busy, stopping or cannot be reached; the call may be retried."""


class AcpAgentError(Unavailable):
    """An external ACP agent could not be started, initialised or prompted, or it went away."""


class StoreUnavailable(Unavailable):
    """The store cannot be reached or opened."""


class StoreTimeout(StoreUnavailable):
    """A store call gave up waiting: on a lock another writer holds, for a statement to finish,
    or for a free database connection. Nothing was changed; the call may be retried."""


class Internal(ClawlineError):
    """Something is wrong that the caller cannot mend: a bug, a broken or newer store."""


class StoreError(Internal):
    """The store failed to do its job (a write refused, a schema it cannot read)."""


class MigrationError(StoreError):
    """The store's schema is newer than this clawline or a migration failed."""


CATEGORIES: tuple[type[ClawlineError], ...] = (
    InvalidInput,
    NotFound,
    Conflict,
    Unavailable,
    Internal,
)
"""The categories, in the order of the module docstring."""

CATEGORY_CODES: dict[type[ClawlineError], str] = {
    InvalidInput: "INVALID_REQUEST",
    NotFound: "INVALID_REQUEST",
    Conflict: "CONFLICT",
    Unavailable: "UNAVAILABLE",
    Internal: "UNAVAILABLE",
}
"""The gateway error code of each category (OpenClaw's codes)."""

CODE_CATEGORIES: dict[str, type[ClawlineError]] = {
    "INVALID_REQUEST": InvalidInput,
    "NOT_LINKED": InvalidInput,
    "NOT_PAIRED": InvalidInput,
    "APPROVAL_NOT_FOUND": NotFound,
    "CONFLICT": Conflict,
    "AGENT_TIMEOUT": Unavailable,
    "UNAVAILABLE": Unavailable,
    "TIMEOUT": Unavailable,  # the gateway client's own code: no answer in time
}
"""The category of an error that carries a gateway code (module docstring); an unknown code is
:class:`Internal`."""


_BY_NAME: dict[str, type[ClawlineError]] = {category.__name__: category for category in CATEGORIES}


def category_of(error: ClawlineError) -> type[ClawlineError]:
    """``error``'s category: its category ancestor; else, for an error carrying a protocol
    answer, the category its ``details.errorType`` names, else the category of its ``code``."""
    for category in CATEGORIES:
        if isinstance(error, category):
            return category
    details = getattr(error, "details", None)
    if isinstance(details, dict) and isinstance(details.get("errorType"), str):
        named = _BY_NAME.get(details["errorType"])
        if named is not None:
            return named
    code = getattr(error, "code", None)
    return CODE_CATEGORIES.get(str(code), Internal)
