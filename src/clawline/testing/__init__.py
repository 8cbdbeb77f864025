"""Testing support that ships with clawline, for its own tests and for plugin authors.

- :class:`FakeClock` (:mod:`clawline.testing.clock`): wall time and timers in virtual time;
- :func:`eventually`, :func:`settled` and :func:`drained` (:mod:`clawline.testing.waiting`):
  wait for a condition, until a runtime is idle, or until it has done all it can without a new
  outside event — never for a fixed time;
- :mod:`clawline.testing.live_gateway` (``running_gateway``), :mod:`clawline.testing.wire`
  (``WireRecorder``), :mod:`clawline.testing.channels`, :mod:`clawline.testing.fake_openai`,
  :mod:`clawline.testing.fake_telegram` (``FakeTelegram``), :mod:`clawline.testing.pairing`,
  :mod:`clawline.testing.synapse` (a real Matrix homeserver on loopback) and
  :mod:`clawline.testing.matrix_reader` (a Matrix user's client for tests), and
  :mod:`clawline.testing.statements` (``StatementCount``: what a SQLite connection ran).
"""

from clawline.testing.clock import FakeClock
from clawline.testing.waiting import drained, eventually, settled

__all__ = ["FakeClock", "drained", "eventually", "settled"]
