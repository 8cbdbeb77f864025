"""The ``[acp]`` section: defaults, values, and one clear ``ConfigError`` line per mistake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawline.config import AgentsConfig, ConfigError, parse_agents_config

STATE = Path("/tmp/state")
BAD_COMMAND = (
    'config: acp.agents.a.command must be a non-empty list of strings (argv, e.g. ["codex-acp"])'
)


def parse(acp: Any) -> AgentsConfig:
    return parse_agents_config({"acp": acp}, STATE)


def test_defaults() -> None:
    config = parse_agents_config({}, STATE).acp
    assert (config.enabled, config.dispatch_enabled, config.configured) == (True, True, False)
    assert (config.default_agent, config.allowed_agents) == (None, ())
    assert (config.permission_mode, config.shutdown_grace_s) == ("approve-reads", 3.0)
    assert config.allows("anything")


def test_a_full_section() -> None:
    config = parse(
        {
            "enabled": True,
            "dispatch": {"enabled": False},
            "defaultAgent": "Codex",
            "allowedAgents": ["codex", "Claude"],
            "permissionMode": "deny-all",
            "shutdownGraceSeconds": 1.5,
            "agents": {
                "codex": {
                    "command": ["codex-acp", "--quiet"],
                    "env": {"K": "s3cret"},
                    "cwd": "/srv",
                },
                "claude": {"command": ["claude-acp"]},
            },
        }
    ).acp
    assert config.dispatch_enabled is False
    assert config.default_agent == "codex"
    assert config.allowed_agents == ("codex", "claude")
    assert (config.permission_mode, config.shutdown_grace_s) == ("deny-all", 1.5)
    codex = config.agents["codex"]
    assert codex.command == ("codex-acp", "--quiet")
    assert dict(codex.env) == {"K": "s3cret"}
    assert codex.cwd == Path("/srv")
    assert config.agents["claude"].cwd is None
    assert "s3cret" not in repr(codex)  # env values are not logged
    assert config.allows("claude")
    assert not config.allows("gemini")


@pytest.mark.parametrize(
    ("acp", "message"),
    [
        ("yes", "config: acp must be a table"),
        ({"enabled": "no"}, "config: acp.enabled must be true or false"),
        ({"dispatch": {"enabled": 1}}, "config: acp.dispatch.enabled must be true or false"),
        ({"dispatch": []}, "config: acp.dispatch must be a table"),
        (
            {"defaultAgent": "Bad Id"},
            "config: acp.defaultAgent must be an agent id matching [a-z0-9][a-z0-9_-]{0,63}",
        ),
        (
            {"defaultAgent": "ghost"},
            'config: acp.defaultAgent "ghost" is not configured in [acp.agents]',
        ),
        ({"allowedAgents": "codex"}, "config: acp.allowedAgents must be a list of agent ids"),
        (
            {"allowedAgents": ["ok", ""]},
            "config: acp.allowedAgents[1] must be an agent id matching [a-z0-9][a-z0-9_-]{0,63}",
        ),
        (
            {"permissionMode": "ask"},
            'config: acp.permissionMode must be "approve-all", "approve-reads" or "deny-all"',
        ),
        (
            {"shutdownGraceSeconds": 0},
            "config: acp.shutdownGraceSeconds must be a number of seconds > 0 and <= 60",
        ),
        ({"agents": []}, "config: acp.agents must be a table"),
        ({"agents": {"x": "cmd"}}, "config: acp.agents.x must be a table"),
        (
            {"agents": {"bad id": {"command": ["a"]}}},
            "config: acp.agents.bad id is not a usable agent id (use [a-z0-9][a-z0-9_-]{0,63})",
        ),
        (
            {"agents": {"a": {"command": ["x"]}, "A": {"command": ["y"]}}},
            'config: acp.agents.A is configured twice (ids are case-insensitive: "a")',
        ),
        ({"agents": {"a": {}}}, "config: acp.agents.a.command is required (the agent's argv)"),
        ({"agents": {"a": {"command": "codex-acp"}}}, BAD_COMMAND),
        ({"agents": {"a": {"command": []}}}, BAD_COMMAND),
        ({"agents": {"a": {"command": ["x", ""]}}}, BAD_COMMAND),
        (
            {"agents": {"a": {"command": ["x"], "env": {"K": 1}}}},
            "config: acp.agents.a.env must be a table of environment variable names to strings",
        ),
        (
            {"agents": {"a": {"command": ["x"], "cwd": "relative/dir"}}},
            "config: acp.agents.a.cwd must be an absolute directory path",
        ),
    ],
)
def test_mistakes(acp: Any, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(acp)
    assert str(caught.value) == message
