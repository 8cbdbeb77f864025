"""Model providers: the seam (:mod:`.base`), the offline model, OpenAI-compatible servers and
Anthropic; :class:`~.registry.ProviderRegistry` maps model references to them."""
