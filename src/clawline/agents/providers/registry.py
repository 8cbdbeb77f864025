"""Model references → providers: ``"offline"``, ``"openai/<model>"``, ``"anthropic/<model>"``
and ``"<name>/<model>"`` for a provider configured under ``[models.providers.<name>]`` (its
``api`` says which protocol it speaks) or registered with :meth:`ProviderRegistry.register`.

Clients are made on first use and reused; :meth:`ProviderRegistry.aclose` closes them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TypeAlias

from clawline.agents.providers.base import Provider, ProviderError
from clawline.config import (
    BUILTIN_PROVIDERS,
    DEFAULT_ECHO_DELAY_MS,
    AgentsConfig,
    ProviderSettings,
    parse_model_ref,
)

ProviderFactory: TypeAlias = Callable[[ProviderSettings, Mapping[str, str]], Provider]
"""Makes the provider of one ``[models.providers.<name>]`` table (with the environment, for
API keys)."""


class ProviderRegistry:
    """Providers by name. Empty when made: the built-in providers plugin registers ``offline``
    and the ``openai`` and ``anthropic`` APIs (:mod:`clawline.agents.plugin`), other plugins
    their own providers, through the ``register_providers`` hook."""

    def __init__(
        self,
        config: AgentsConfig | None = None,
        *,
        env: Mapping[str, str] | None = None,
        offline_delay_ms: int = DEFAULT_ECHO_DELAY_MS,
    ) -> None:
        self._config = config
        self._env = os.environ if env is None else env
        self.offline_delay_ms = offline_delay_ms
        """The ``offline`` model's delay between deltas (``[agents] echo_delay_ms``)."""
        self._providers: dict[str, Provider] = {}
        self._registered: set[str] = set()
        self._apis: dict[str, ProviderFactory] = {}

    def configure(self, config: AgentsConfig) -> None:
        """Set the agent configuration (made after the providers were registered, so that it
        may name them)."""
        self._config = config

    @property
    def config(self) -> AgentsConfig:
        if self._config is None:
            raise ProviderError("the model providers are not configured yet")
        return self._config

    def register(self, name: str, provider: Provider) -> None:
        """Serve ``"<name>/<model>"`` (and ``"<name>"`` alone) with ``provider``."""
        self._providers[name] = provider
        self._registered.add(name)

    def register_api(self, api: str, factory: ProviderFactory) -> None:
        """Make the providers configured with ``api = "<api>"`` (or named after it, for
        ``openai`` and ``anthropic``) with ``factory``, on first use."""
        self._apis[api] = factory

    def plugin_provider_names(self) -> list[str]:
        """Registered names a model reference may use besides the built-in ones."""
        return sorted(name for name in self._registered if name not in BUILTIN_PROVIDERS)

    def resolve(self, model_ref: str) -> tuple[Provider, str]:
        """The provider and the model name for a model reference; raises ``ProviderError``."""
        if model_ref in self._registered:
            return self._providers[model_ref], model_ref
        config = self.config
        known: dict[str, object] = {
            **config.providers,
            **dict.fromkeys(self.plugin_provider_names()),
        }
        try:
            name, model = parse_model_ref(model_ref, known)
        except ValueError as error:
            raise ProviderError(f'invalid model "{model_ref}": {error}') from None
        provider = self._providers.get(name)
        if provider is None:
            provider = self._make(config, name)
            self._providers[name] = provider
        return provider, model

    def _make(self, config: AgentsConfig, name: str) -> Provider:
        settings = config.provider(name)
        if settings is None:
            raise ProviderError(f'unknown model provider "{name}"')
        factory = self._apis.get(settings.api)
        if factory is None:
            raise ProviderError(f'no plugin serves the "{settings.api}" model API')
        return factory(settings, self._env)

    async def aclose(self) -> None:
        """Close the HTTP clients of the providers made so far."""
        for provider in list(self._providers.values()):
            closer = getattr(provider, "aclose", None)
            if closer is not None:
                await closer()
