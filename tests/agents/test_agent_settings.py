"""Agent configuration: OpenClaw's sections parsed into typed, frozen settings."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from clawline.config import (
    MAX_RUN_TIMEOUT_MS,
    AgentsConfig,
    ConfigError,
    Settings,
    SubagentLimits,
    ToolPolicy,
    parse_agents_config,
)
from clawline.runtime import Runtime

FULL = {
    "agents": {
        "timeout_seconds": 60,
        "defaults": {
            "model": "openai/gpt-4o",
            "timeoutSeconds": 120,
            "subagents": {
                "maxSpawnDepth": 2,
                "maxChildrenPerAgent": 3,
                "maxConcurrent": 4,
                "runTimeoutSeconds": 30,
                "archiveAfterMinutes": 0,
                "allowAgents": ["reviewer"],
                "requireAgentId": True,
            },
        },
        "list": [
            {
                "id": "Reviewer",
                "model": "anthropic/claude-x",
                "workspace": "/srv/reviewer",
                "timeoutSeconds": 0,
                "subagents": {"allowAgents": ["*"], "maxSpawnDepth": 3},
                "tools": {"allow": [], "deny": ["write_file"]},
            },
            {"id": "local", "model": "ollama/llama3"},
        ],
    },
    "models": {
        "providers": {
            "openai": {"baseUrl": "http://127.0.0.1:11434/v1", "apiKeyEnv": "MY_KEY"},
            "anthropic": {"apiKey": "sk-secret-value"},
            "ollama": {"api": "openai", "baseUrl": "http://127.0.0.1:11434/v1", "maxRetries": 0},
        }
    },
    "tools": {
        "agentToAgent": {"enabled": True, "allow": ["rev*", "main"]},
        "sessions": {"visibility": "all"},
        "subagents": {"tools": {"allow": ["sessions_list"], "deny": ["read_file"]}},
    },
    "session": {"agentToAgent": {"maxPingPongTurns": 9}},
}


def parse(raw: dict[str, Any], state_dir: Path = Path("/state")) -> AgentsConfig:
    return parse_agents_config(raw, state_dir)


def test_an_empty_config_gives_the_documented_defaults(tmp_path: Path) -> None:
    config = parse({}, tmp_path)
    agent = config.resolve_agent("main")
    assert agent.model == "offline"
    assert agent.workspace == tmp_path / "workspace" / "main"
    assert agent.timeout_seconds == 172800
    assert agent.subagents == SubagentLimits(
        max_spawn_depth=1,
        max_children_per_agent=5,
        max_concurrent=8,
        run_timeout_seconds=0,
        archive_after_minutes=60,
        allow_agents=(),
        require_agent_id=False,
    )
    assert agent.tools == ToolPolicy()
    assert config.agent_to_agent.enabled is False
    assert config.sessions_visibility == "tree"
    assert config.max_ping_pong_turns == 5
    assert config.agent_ids() == []


def test_the_full_example_is_parsed_and_merged(tmp_path: Path) -> None:
    config = parse(FULL, tmp_path)
    assert config.agent_ids() == ["reviewer", "local"]
    main = config.resolve_agent("main")
    assert (main.model, main.timeout_seconds) == ("openai/gpt-4o", 120)
    assert main.subagents.max_spawn_depth == 2
    assert main.subagents.allow_agents == ("reviewer",)
    assert main.subagents.require_agent_id is True
    reviewer = config.resolve_agent("REVIEWER")
    assert reviewer.id == "reviewer"
    assert reviewer.model == "anthropic/claude-x"
    assert reviewer.workspace == Path("/srv/reviewer")
    assert reviewer.timeout_ms == MAX_RUN_TIMEOUT_MS  # 0 = none
    # the list entry's subagents table is merged over the defaults, key by key
    assert reviewer.subagents.max_spawn_depth == 3
    assert reviewer.subagents.allow_agents == ("*",)
    assert reviewer.subagents.max_children_per_agent == 3
    assert reviewer.tools.deny == ("write_file",)
    assert not reviewer.tools.permits("write_file")
    assert reviewer.tools.permits("read_file")
    assert reviewer.subagent_tools == ToolPolicy(allow=("sessions_list",), deny=("read_file",))
    local = config.resolve_agent("local")
    assert (local.model, local.subagents) == ("ollama/llama3", main.subagents)
    assert config.agent_to_agent.enabled is True
    assert config.agent_to_agent.allows("Reviewer")
    assert not config.agent_to_agent.allows("other")
    assert config.sessions_visibility == "all"
    assert config.max_ping_pong_turns == 5  # clamped


def test_providers_read_keys_from_the_environment_and_never_show_them() -> None:
    config = parse(FULL)
    openai = config.provider("openai")
    assert openai is not None
    assert (openai.api, openai.base_url, openai.api_key_env) == (
        "openai",
        "http://127.0.0.1:11434/v1",
        "MY_KEY",
    )
    assert openai.api_key({"MY_KEY": "from-env"}) == "from-env"
    assert openai.api_key({}) is None
    anthropic = config.provider("anthropic")
    assert anthropic is not None
    assert anthropic.api_key({}) == "sk-secret-value"
    assert anthropic.api_key_env == "ANTHROPIC_API_KEY"
    assert "sk-secret-value" not in repr(anthropic)
    assert "sk-secret-value" not in repr(config)
    ollama = config.provider("ollama")
    assert ollama is not None
    assert (ollama.api, ollama.max_retries, ollama.api_key_env) == ("openai", 0, None)
    builtin = parse({}).provider("openai")
    assert builtin is not None
    assert (builtin.api_key_env, builtin.base_url) == ("OPENAI_API_KEY", None)
    assert parse({}).provider("nope") is None


def test_workspaces_expand_home_and_resolve_relative_to_the_state_dir(tmp_path: Path) -> None:
    config = parse({"agents": {"defaults": {"workspace": "shared"}}}, tmp_path)
    assert config.resolve_agent("a").workspace == tmp_path / "shared"
    assert config.resolve_agent("b").workspace == tmp_path / "shared"
    home = parse({"agents": {"defaults": {"workspace": "~/work"}}}, tmp_path)
    assert home.resolve_agent("a").workspace == Path("~/work").expanduser().resolve()


@pytest.mark.parametrize("turns", [-3, 0, 2, 5, 6, 100])
def test_max_ping_pong_turns_is_clamped(turns: int) -> None:
    config = parse({"session": {"agentToAgent": {"maxPingPongTurns": turns}}})
    assert config.max_ping_pong_turns == max(0, min(5, turns))


def test_the_settings_objects_are_frozen() -> None:
    agent = parse({}).resolve_agent("main")
    with pytest.raises(dataclasses.FrozenInstanceError):
        agent.model = "x"  # type: ignore[misc]


def test_a_services_run_manager_carries_the_config(tmp_path: Path) -> None:
    raw = {"agents": {"defaults": {"timeoutSeconds": 7}}}
    services = Runtime.open(Settings(state_dir=tmp_path, raw=raw))
    try:
        assert services.runs.config.resolve_agent("main").timeout_ms == 7000
    finally:
        services.close()


SUB = "agents.defaults.subagents"
BAD: list[tuple[dict[str, Any], str]] = [
    ({"agents": []}, "config: agents must be a table"),
    ({"agents": {"defaults": 3}}, "config: agents.defaults must be a table"),
    ({"agents": {"timeout_seconds": -1}}, "config: agents.timeout_seconds must be an integer >= 0"),
    (
        {"agents": {"defaults": {"timeoutSeconds": -5}}},
        "config: agents.defaults.timeoutSeconds must be an integer >= 0",
    ),
    (
        {"agents": {"defaults": {"model": "gpt"}}},
        'config: agents.defaults.model "gpt" is invalid: use "offline" or "<provider>/<model>"',
    ),
    (
        {"agents": {"defaults": {"model": "mystery/x"}}},
        'config: agents.defaults.model "mystery/x" is invalid: unknown provider "mystery" '
        "(known: offline, openai, anthropic)",
    ),
    (
        {"agents": {"defaults": {"model": ""}}},
        'config: agents.defaults.model must be "offline" or "<provider>/<model>"',
    ),
    (
        {"agents": {"defaults": {"workspace": 5}}},
        "config: agents.defaults.workspace must be a directory path",
    ),
    ({"agents": {"defaults": {"subagents": {"maxSpawnDepth": 0}}}}, f"{SUB}.maxSpawnDepth"),
    ({"agents": {"defaults": {"subagents": {"maxSpawnDepth": 6}}}}, "an integer from 1 to 5"),
    ({"agents": {"defaults": {"subagents": {"maxSpawnDepth": True}}}}, "from 1 to 5"),
    (
        {"agents": {"defaults": {"subagents": {"maxChildrenPerAgent": 21}}}},
        f"config: {SUB}.maxChildrenPerAgent must be an integer from 1 to 20",
    ),
    ({"agents": {"defaults": {"subagents": {"maxChildrenPerAgent": 0}}}}, "from 1 to 20"),
    (
        {"agents": {"defaults": {"subagents": {"maxConcurrent": 0}}}},
        f"config: {SUB}.maxConcurrent must be an integer >= 1",
    ),
    ({"agents": {"defaults": {"subagents": {"runTimeoutSeconds": -1}}}}, "runTimeoutSeconds"),
    ({"agents": {"defaults": {"subagents": {"archiveAfterMinutes": 1.5}}}}, "archiveAfter"),
    (
        {"agents": {"defaults": {"subagents": {"allowAgents": "*"}}}},
        f"config: {SUB}.allowAgents must be a list of non-empty strings",
    ),
    (
        {"agents": {"defaults": {"subagents": {"requireAgentId": "yes"}}}},
        f"config: {SUB}.requireAgentId must be true or false",
    ),
    ({"agents": {"list": {"id": "a"}}}, "config: agents.list must be an array of tables"),
    ({"agents": {"list": [{"model": "offline"}]}}, "config: agents.list[0].id is required"),
    ({"agents": {"list": [{"id": "bad id!"}]}}, "config: agents.list[0].id must be an agent id"),
    ({"agents": {"list": [{"id": "a"}, {"id": "A"}]}}, 'agents.list[1].id "a" is listed twice'),
    (
        {"agents": {"list": [{"id": "a", "subagents": {"maxSpawnDepth": 9}}]}},
        "config: agents.list[0].subagents.maxSpawnDepth must be an integer from 1 to 5",
    ),
    (
        {"agents": {"list": [{"id": "a", "tools": {"deny": "write_file"}}]}},
        "config: agents.list[0].tools.deny must be a list of non-empty strings",
    ),
    ({"agents": {"list": [{"id": "a", "model": "x/y"}]}}, 'agents.list[0].model "x/y"'),
    (
        {"agents": {"list": [{"id": "a", "name": 7}]}},
        "config: agents.list[0].name must be a string",
    ),
    ({"models": {"providers": {"openai": 1}}}, "config: models.providers.openai must be a table"),
    (
        {"models": {"providers": {"local": {"baseUrl": "http://x"}}}},
        'config: models.providers.local.api must be "openai" or "anthropic"',
    ),
    ({"models": {"providers": {"offline": {}}}}, "models.providers.offline is not a usable"),
    (
        {"models": {"providers": {"openai": {"maxRetries": 11}}}},
        "config: models.providers.openai.maxRetries must be an integer from 0 to 10",
    ),
    (
        {"models": {"providers": {"openai": {"apiKey": ""}}}},
        "config: models.providers.openai.apiKey must be a non-empty string",
    ),
    (
        {"tools": {"agentToAgent": {"enabled": "true"}}},
        "config: tools.agentToAgent.enabled must be true or false",
    ),
    ({"tools": {"agentToAgent": {"allow": [1]}}}, "tools.agentToAgent.allow must be a list"),
    (
        {"tools": {"sessions": {"visibility": "everyone"}}},
        'config: tools.sessions.visibility must be "self", "tree", "agent" or "all"',
    ),
    ({"tools": {"subagents": {"tools": {"allow": [""]}}}}, "tools.subagents.tools.allow"),
    (
        {"session": {"agentToAgent": {"maxPingPongTurns": "5"}}},
        "config: session.agentToAgent.maxPingPongTurns must be an integer",
    ),
]


@pytest.mark.parametrize(("raw", "message"), BAD)
def test_bad_values_are_one_clear_config_error(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(raw)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_provider_configured_under_its_own_name_is_a_known_model_prefix() -> None:
    raw = {
        "models": {"providers": {"vllm": {"api": "openai-completions", "baseUrl": "http://x"}}},
        "agents": {"defaults": {"model": "vllm/qwen"}},
    }
    assert parse(raw).resolve_agent("main").model == "vllm/qwen"


def test_the_legacy_agents_keys_keep_working(tmp_path: Path) -> None:
    raw = {"agents": {"echo_delay_ms": 0, "timeout_seconds": 9}}
    services = Runtime.open(Settings(state_dir=tmp_path, raw=raw))
    try:
        assert services.runs.settings.echo_delay_ms == 0
        assert services.runs.config.resolve_agent("main").timeout_ms == 9000
    finally:
        services.close()
