"""Agent runs: the run manager, runners and (later) model providers and tools."""
