"""A clock that only moves when told to."""

from __future__ import annotations

__all__ = ["FakeClock"]


class FakeClock:
    """``now_ms`` returns a fixed time; :meth:`advance` moves it forward."""

    def __init__(self, start_ms: int = 1_790_000_000_000) -> None:
        self._now = start_ms

    def now_ms(self) -> int:
        return self._now

    def advance(self, ms: int) -> int:
        if ms < 0:
            raise ValueError("a clock never goes back")
        self._now += ms
        return self._now

    def set(self, ms: int) -> None:
        self._now = ms
