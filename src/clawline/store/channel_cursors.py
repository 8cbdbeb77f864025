"""The store interface of the channel cursors: ``store.channel_cursors`` and
``tx.channel_cursors`` — how far each channel account's inbound stream has been read (a Matrix
sync token), so that a gateway started again reads on from there. The SQL is shared by the
backends (:mod:`clawline.store._channel_cursors_sql`)."""

from __future__ import annotations

import abc


class ChannelCursorReads(abc.ABC):
    """``store.channel_cursors``."""

    @abc.abstractmethod
    def get(self, channel: str, account_id: str) -> str | None:
        """The position saved for the account, ``None`` before the first."""


class ChannelCursorWrites(abc.ABC):
    """``tx.channel_cursors``."""

    @abc.abstractmethod
    def save(self, channel: str, account_id: str, position: str, at: int) -> None:
        """Keep ``position`` as the account's (replacing the one before)."""
