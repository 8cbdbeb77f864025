"""Testing fakes that ship with clawline, for its own tests and for plugin authors."""

from clawline.testing.clock import FakeClock

__all__ = ["FakeClock"]
