"""What the plugin works with once started: the gateway's :class:`PluginHost` and the plugin's
settings, both taken in its ``startup`` hook (:class:`XWorkmateState`).

The gateway methods and the agent tool are registered before the gateway starts, so they ask
for the state when they are called (:data:`StateSource`); before ``startup`` there is none
(:class:`XWorkmateNotStarted`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawline.errors import Unavailable

if TYPE_CHECKING:
    from clawline.config import XWorkmateSettings
    from clawline.plugins.host import PluginHost

NOT_STARTED = "the xworkmate plugin has not started"


class XWorkmateNotStarted(Unavailable):
    """A method or tool call before the plugin's ``startup`` hook ran (answered
    ``UNAVAILABLE``)."""


@dataclass(frozen=True, slots=True)
class XWorkmateState:
    host: PluginHost
    """What the plugin may use of the gateway."""
    config: XWorkmateSettings
    """``[plugins.xworkmate]``, parsed once at start-up."""


StateSource = Callable[[], XWorkmateState]
"""The started plugin's state; raises :class:`XWorkmateNotStarted` (or the configuration error
start-up met) when there is none."""
