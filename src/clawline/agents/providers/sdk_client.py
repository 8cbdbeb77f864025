"""The SDK client a hosted-model provider holds: made on first use (so a gateway that only runs
the offline model never imports the SDKs), with the provider's key, base URL and retries, and
closed with the provider."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Generic, Protocol, TypeVar

from clawline.agents.providers.base import ProviderError
from clawline.config import ProviderSettings


class _Closable(Protocol):
    def close(self) -> Awaitable[None]: ...


ClientT = TypeVar("ClientT", bound=_Closable)

ClientFactory = Callable[[str, "str | None", int], ClientT]
"""``(api_key, base_url, max_retries) -> client``."""


def missing_key_error(settings: ProviderSettings) -> ProviderError:
    where = f"set {settings.api_key_env} or " if settings.api_key_env else "set "
    return ProviderError(
        f"no API key for model provider {settings.name}: "
        f"{where}models.providers.{settings.name}.apiKey",
        provider=settings.name,
    )


class SdkClient(Generic[ClientT]):
    def __init__(
        self,
        settings: ProviderSettings,
        env: Mapping[str, str],
        factory: Callable[[str, str | None, int], ClientT],
    ) -> None:
        self._settings = settings
        self._env = env
        self._factory = factory
        self._client: ClientT | None = None

    def get(self) -> ClientT:
        """The client; raises :class:`ProviderError` when no key is configured for a hosted
        service (a ``baseUrl`` — a local server — gets a placeholder key)."""
        if self._client is None:
            settings = self._settings
            key = settings.api_key(self._env)
            if key is None and settings.base_url is None:
                raise missing_key_error(settings)
            self._client = self._factory(key or "unused", settings.base_url, settings.max_retries)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
