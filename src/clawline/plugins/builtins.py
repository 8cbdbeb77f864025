"""clawline's own built-ins, registered through the same hooks as any plugin.

- gateway methods: every family of :mod:`clawline.gateway.methods`;
- agent tools: the workspace file tools and the session tools of :mod:`clawline.collab`
  (``agents_list`` among them);
- channels: ``webchat``;
- model providers: ``offline``, and the ``openai`` and ``anthropic`` APIs (the providers of
  ``[models.providers.<name>]`` tables are made from these on first use).

Every hook here is ``tryfirst``, so the built-ins register before any other plugin and keep
their names. Imports are local: listing plugins (``clawline plugins``) imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from clawline.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from clawline.agents.providers.base import Provider
    from clawline.agents.providers.registry import ProviderRegistry
    from clawline.agents.settings import ProviderSettings
    from clawline.agents.tools.registry import ToolRegistry
    from clawline.channels.registry import ChannelRegistry
    from clawline.gateway.registry import MethodRegistry

__all__ = ["PLUGIN_ID"]

PLUGIN_ID = "clawline"


@hookimpl(tryfirst=True)
def register_gateway_methods(methods: MethodRegistry) -> None:
    from clawline.gateway.methods import builtin_methods

    methods.include(builtin_methods())


@hookimpl(tryfirst=True)
def register_tools(tools: ToolRegistry) -> None:
    from clawline.agents.tools.files import file_tools
    from clawline.collab import collab_tools, subagent_tools
    from clawline.collab.agents_list import AgentsListTool

    for tool in [*file_tools(), *collab_tools(), *subagent_tools(), AgentsListTool()]:
        tools.register(tool)


@hookimpl(tryfirst=True)
def register_channels(channels: ChannelRegistry) -> None:
    from clawline.channels.webchat import WebchatAdapter

    channels.register(WebchatAdapter())


def _openai(settings: ProviderSettings, env: Mapping[str, str]) -> Provider:
    from clawline.agents.providers.openai_compat import OpenAIProvider

    return OpenAIProvider(settings, env)


def _anthropic(settings: ProviderSettings, env: Mapping[str, str]) -> Provider:
    from clawline.agents.providers.anthropic import AnthropicProvider

    return AnthropicProvider(settings, env)


@hookimpl(tryfirst=True)
def register_providers(providers: ProviderRegistry) -> None:
    from clawline.agents.providers.offline import OfflineProvider

    providers.register("offline", OfflineProvider(providers.offline_delay_ms))
    providers.register_api("openai", _openai)
    providers.register_api("anthropic", _anthropic)
