"""How a failure is logged, by what it says about whose fault it is.

- A **client mistake** — an error whose class says ``client_fault``:
  :class:`~clawline.errors.InvalidInput`, :class:`~clawline.errors.NotFound`,
  :class:`~clawline.errors.Conflict`, a gateway's answer to a request — is routine traffic:
  one line at INFO or below, without a traceback. A fuzzing client must not flood the log with
  errors.
- Any other :class:`~clawline.errors.ClawlineError` is a failure clawline raises on purpose
  (a store that cannot be reached, an ACP agent that went away): one line at WARNING.
- Anything else is a bug: ERROR, with the traceback.

Messages may quote what a client sent, so line breaks are escaped: one failure, one line.
"""

from __future__ import annotations

import logging

from clawline.errors import ClawlineError


def is_client_mistake(error: BaseException) -> bool:
    """Whether ``error`` refuses what a client asked for (its fault, not clawline's)."""
    return isinstance(error, ClawlineError) and error.client_fault


def failure_level(error: BaseException, *, client_level: int = logging.INFO) -> int:
    """``client_level`` for a client mistake, WARNING for another typed error, else ERROR."""
    if is_client_mistake(error):
        return client_level
    if isinstance(error, ClawlineError):
        return logging.WARNING
    return logging.ERROR


def one_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n")


def log_failure(
    logger: logging.Logger,
    error: BaseException,
    what: str,
    *,
    client_level: int = logging.INFO,
) -> None:
    """Log ``<what>: <error>`` at :func:`failure_level`; only a bug carries its traceback."""
    level = failure_level(error, client_level=client_level)
    if not logger.isEnabledFor(level):
        return
    message = one_line(str(error) or type(error).__name__)
    logger.log(level, "%s: %s", what, message, exc_info=error if level >= logging.ERROR else None)
