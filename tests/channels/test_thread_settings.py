"""``[session.threadBindings]`` / ``[channels.<ch>.threadBindings]`` / per account: parsing and
the precedence account → channel → session → default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawline.config import (
    AgentsConfig,
    ConfigError,
    ThreadBindingSettings,
    parse_agents_config,
    parse_config,
)


def _config(raw: dict[str, Any]) -> AgentsConfig:
    return parse_agents_config(raw, Path("/tmp/state"))


def test_defaults_without_config() -> None:
    settings = _config({}).thread_bindings.resolve("webchat", None)
    assert settings == ThreadBindingSettings(channel="webchat", account_id="default")
    assert settings.enabled is True
    assert settings.idle_ms == 24 * 3_600_000
    assert settings.max_age_ms == 0
    assert settings.spawn_enabled("subagent")
    assert settings.spawn_enabled("acp")


def test_child_default_placement_makes_spawns_opt_in() -> None:
    settings = _config({}).thread_bindings.resolve("forum", "a", default_placement="child")
    assert settings.enabled is True
    assert settings.spawn_subagent_sessions is False
    assert settings.spawn_acp_sessions is False


def test_each_key_takes_the_most_specific_level() -> None:
    raw = {
        "session": {"threadBindings": {"enabled": False, "idleHours": 2, "maxAgeHours": 10}},
        "channels": {
            "forum": {
                "threadBindings": {"enabled": True, "maxAgeHours": 5, "spawnAcpSessions": True},
                "accounts": {
                    "work": {"threadBindings": {"idleHours": 0.5, "spawnAcpSessions": False}}
                },
            }
        },
    }
    config = _config(raw).thread_bindings
    work = config.resolve("forum", "work", default_placement="child")
    assert (work.enabled, work.idle_hours, work.max_age_hours) == (True, 0.5, 5.0)
    assert work.idle_ms == 1_800_000
    assert (work.spawn_subagent_sessions, work.spawn_acp_sessions) == (False, False)
    other = config.resolve("FORUM", "home", default_placement="child")
    assert (other.enabled, other.idle_hours, other.spawn_acp_sessions) == (True, 2.0, True)
    elsewhere = config.resolve("sms", "x")
    assert (elsewhere.enabled, elsewhere.idle_hours, elsewhere.max_age_hours) == (False, 2.0, 10.0)


def test_account_can_reenable_a_disabled_channel() -> None:
    raw = {
        "channels": {
            "forum": {
                "threadBindings": {"enabled": False},
                "accounts": {"work": {"threadBindings": {"enabled": True}}},
            }
        }
    }
    config = _config(raw).thread_bindings
    assert config.resolve("forum", "work").enabled is True
    assert config.resolve("forum", "other").enabled is False


def test_session_level_spawn_flags_apply_to_every_channel() -> None:
    raw = {"session": {"threadBindings": {"spawnSubagentSessions": True}}}
    settings = _config(raw).thread_bindings.resolve("forum", "a", default_placement="child")
    assert settings.spawn_subagent_sessions is True
    assert settings.spawn_acp_sessions is False


def test_default_account_from_channel_config() -> None:
    config = parse_config({"channels": {"forum": {"defaultAccount": " bot "}}}).thread_bindings
    assert config.default_account("forum") == "bot"
    assert config.default_account("sms") == "default"
    assert config.resolve("forum", None).account_id == "bot"
    assert config.resolve("forum", "  ").account_id == "bot"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"session": {"threadBindings": {"idleHours": -1}}},
            "config: session.threadBindings.idleHours must be a number of hours >= 0",
        ),
        (
            {"session": {"threadBindings": {"maxAgeHours": "2"}}},
            "config: session.threadBindings.maxAgeHours must be a number of hours >= 0",
        ),
        (
            {"session": {"threadBindings": {"idleHours": True}}},
            "config: session.threadBindings.idleHours must be a number of hours >= 0",
        ),
        (
            {"session": {"threadBindings": {"enabled": "yes"}}},
            "config: session.threadBindings.enabled must be true or false",
        ),
        ({"session": {"threadBindings": []}}, "config: session.threadBindings must be a table"),
        (
            {"channels": {"forum": {"threadBindings": {"spawnAcpSessions": 1}}}},
            "config: channels.forum.threadBindings.spawnAcpSessions must be true or false",
        ),
        (
            {"channels": {"forum": {"accounts": {"w": {"threadBindings": {"enabled": 0}}}}}},
            "config: channels.forum.accounts.w.threadBindings.enabled must be true or false",
        ),
        (
            {"channels": {"forum": {"accounts": {"w": 3}}}},
            "config: channels.forum.accounts.w must be a table",
        ),
        (
            {"channels": {"forum": {"defaultAccount": ""}}},
            "config: channels.forum.defaultAccount must be a non-empty string",
        ),
        ({"channels": "forum"}, "config: channels must be a table"),
    ],
)
def test_bad_values_are_refused_with_the_key(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _config(raw)
    assert str(caught.value) == message
