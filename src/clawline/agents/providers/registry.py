"""Model references → providers: ``"offline"``, ``"openai/<model>"``, ``"anthropic/<model>"``
and ``"<name>/<model>"`` for a provider configured under ``[models.providers.<name>]`` (its
``api`` says which protocol it speaks) or registered with :meth:`ProviderRegistry.register`.

Clients are made on first use and reused; :meth:`ProviderRegistry.aclose` closes them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from clawline.agents.config import DEFAULT_ECHO_DELAY_MS
from clawline.agents.providers.base import Provider, ProviderError
from clawline.agents.providers.offline import OfflineProvider
from clawline.agents.settings import AgentsConfig
from clawline.agents.settings_parse import parse_model_ref

__all__ = ["ProviderRegistry"]


class ProviderRegistry:
    def __init__(
        self,
        config: AgentsConfig,
        *,
        env: Mapping[str, str] | None = None,
        offline_delay_ms: int = DEFAULT_ECHO_DELAY_MS,
    ) -> None:
        self._config = config
        self._env = os.environ if env is None else env
        self._providers: dict[str, Provider] = {"offline": OfflineProvider(offline_delay_ms)}
        self._registered: set[str] = set()

    def register(self, name: str, provider: Provider) -> None:
        """Serve ``"<name>/<model>"`` (and ``"<name>"`` alone) with ``provider``."""
        self._providers[name] = provider
        self._registered.add(name)

    def resolve(self, model_ref: str) -> tuple[Provider, str]:
        """The provider and the model name for a model reference; raises ``ProviderError``."""
        if model_ref in self._registered:
            return self._providers[model_ref], model_ref
        known: dict[str, object] = {**self._config.providers, **dict.fromkeys(self._registered)}
        try:
            name, model = parse_model_ref(model_ref, known)
        except ValueError as error:
            raise ProviderError(f'invalid model "{model_ref}": {error}') from None
        provider = self._providers.get(name)
        if provider is None:
            provider = self._make(name)
            self._providers[name] = provider
        return provider, model

    def _make(self, name: str) -> Provider:
        settings = self._config.provider(name)
        if settings is None:
            raise ProviderError(f'unknown model provider "{name}"')
        if settings.api == "anthropic":
            from clawline.agents.providers.anthropic import AnthropicProvider

            return AnthropicProvider(settings, self._env)
        from clawline.agents.providers.openai_compat import OpenAIProvider

        return OpenAIProvider(settings, self._env)

    async def aclose(self) -> None:
        """Close the HTTP clients of the providers made so far."""
        for provider in list(self._providers.values()):
            closer = getattr(provider, "aclose", None)
            if closer is not None:
                await closer()
