"""The agents' built-in plugins: registered by the runtime through the same hooks as any plugin.

- :class:`ProvidersPlugin` (``register_providers``): the ``offline`` model and the ``openai`` and
  ``anthropic`` APIs (the providers of ``[models.providers.<name>]`` tables are made from these
  on first use). It registers before the agent configuration is parsed, since a model may name
  a plugin's provider.
- :class:`FileToolsPlugin` (``register_tools``): the workspace file tools under ``[tools.fs]``,
  which is part of that configuration.

Their hooks are ``tryfirst``, so the built-ins register before any other plugin and keep their
names. The provider modules (and their SDKs) are imported when a provider is first made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from clawline.agents.tools.files import file_tools
from clawline.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from clawline.agents.providers.base import Provider
    from clawline.agents.providers.registry import ProviderRegistry
    from clawline.agents.tools.registry import ToolRegistry
    from clawline.config import FsToolsConfig, ProviderSettings

PROVIDERS_PLUGIN = "clawline.providers"
"""The plugin name :class:`ProvidersPlugin` is registered under."""
FILE_TOOLS_PLUGIN = "clawline.files"
"""The plugin name :class:`FileToolsPlugin` is registered under."""


def _openai(settings: ProviderSettings, env: Mapping[str, str]) -> Provider:
    from clawline.agents.providers.openai_compat import OpenAIProvider

    return OpenAIProvider(settings, env)


def _anthropic(settings: ProviderSettings, env: Mapping[str, str]) -> Provider:
    from clawline.agents.providers.anthropic import AnthropicProvider

    return AnthropicProvider(settings, env)


class ProvidersPlugin:
    """``offline`` (pausing ``offline_delay_ms`` between deltas: ``[agents] echo_delay_ms``),
    and the ``openai`` and ``anthropic`` APIs."""

    def __init__(self, *, offline_delay_ms: int) -> None:
        self._offline_delay_ms = offline_delay_ms

    @hookimpl(tryfirst=True)
    def register_providers(self, providers: ProviderRegistry) -> None:
        from clawline.agents.providers.offline import OfflineProvider

        providers.register("offline", OfflineProvider(self._offline_delay_ms))
        providers.register_api("openai", _openai)
        providers.register_api("anthropic", _anthropic)


class FileToolsPlugin:
    """``read_file``, ``write_file`` and ``list_files`` (:mod:`clawline.agents.tools.files`)."""

    def __init__(self, *, fs: FsToolsConfig) -> None:
        self._fs = fs

    @hookimpl(tryfirst=True)
    def register_tools(self, tools: ToolRegistry) -> None:
        for tool in file_tools(fs=self._fs):
            tools.register(tool)
