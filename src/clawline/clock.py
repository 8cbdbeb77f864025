"""Time sources. Domain code asks a :class:`Clock`, never ``time`` directly, so tests can use
:class:`clawline.testing.FakeClock`."""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock"]


class Clock(Protocol):
    def now_ms(self) -> int:
        """Milliseconds since the Unix epoch."""
        ...


class SystemClock:
    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


SYSTEM_CLOCK: Clock = SystemClock()
