"""The exception tree of clawline.

Every error clawline raises on purpose is a :class:`ClawlineError`. The tree is shaped by what a
caller can do about the error, not by which module raised it::

    ClawlineError
    ├── InvalidInput ................ the request was wrong; nothing was changed
    │   ├── InvalidSessionKey
    │   ├── InvalidLabel
    │   ├── InvalidField
    │   ├── InvalidCursor
    │   └── LineageError
    │       ├── LineageFieldNotSupported
    │       ├── LineageImmutable
    │       └── LineageCycle
    ├── NotFound .................... the thing named does not exist
    │   └── SessionNotFound
    ├── Conflict .................... the request clashes with what is stored
    │   └── LabelInUse
    ├── AcpAgentError ............... an external ACP agent could not be started or went away
    └── StoreError .................. the store could not do its job
        ├── StoreUnavailable
        │   ├── StoreInUse ......... (clawline.store.instance_lock)
        │   ├── StoreLockLost ...... (clawline.store.instance_lock)
        │   └── StoreTimeout
        └── MigrationError

``str(error)`` is the exact, user-facing message. Where OpenClaw has an exact error string for a
case, the message is that string, so clients written against OpenClaw keep working.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "AcpAgentError",
    "ClawlineError",
    "Conflict",
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


class LabelInUse(Conflict, InvalidInput):
    """Another session of the same agent already carries the label."""


class AcpAgentError(ClawlineError):
    """An external ACP agent could not be started, initialised or prompted, or it went away."""


class StoreError(ClawlineError):
    """The store failed to do its job (I/O, connection, schema)."""


class StoreUnavailable(StoreError):
    """The store cannot be reached or opened."""


class StoreTimeout(StoreUnavailable):
    """A store call gave up waiting: on a lock another writer holds, for a statement to finish,
    or for a free database connection. Nothing was changed; the call may be retried."""


class MigrationError(StoreError):
    """The store's schema is newer than this clawline or a migration failed."""
