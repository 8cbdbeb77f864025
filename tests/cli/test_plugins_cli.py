"""``clawline plugins``: the plugins a gateway would load, as a table or JSON."""

from __future__ import annotations

import json
from pathlib import Path

from .helpers import Cli, lines

REGISTRATION_HOOKS = [
    "register_channels",
    "register_gateway_methods",
    "register_providers",
    "register_tools",
]
BUILTINS = [
    ("clawline.gateway", "clawline.gateway", ["register_gateway_methods"]),
    ("clawline.channels", "clawline.channels", ["register_channels"]),
    ("clawline.providers", "clawline.agents", ["register_providers"]),
    ("clawline.collab", "clawline.collab", ["register_tools"]),
    ("clawline.files", "clawline.agents", ["register_tools"]),
]
"""The built-in plugin objects the runtime adds: name, origin, hooks."""
BUILTIN_JSON = [
    {"name": name, "source": "builtin", "origin": origin, "hooks": hooks}
    for name, origin, hooks in BUILTINS
]


def _config(state_dir: Path, text: str) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "config.toml").write_text(text, encoding="utf-8")


def test_json_lists_builtins_and_configured_plugins(clawline: Cli, state_dir: Path) -> None:
    _config(
        state_dir,
        '[plugins]\nentry_points = false\nenabled = ["tests.plugins.sample_plugins:recorder"]\n',
    )
    out = json.loads(clawline.ok("plugins", "--format", "json"))
    assert out == {
        "plugins": [
            *BUILTIN_JSON,
            {
                "name": "recorder",
                "source": "config",
                "origin": "tests.plugins.sample_plugins:recorder",
                "hooks": [
                    "agent_end",
                    "session_end",
                    "session_start",
                    "startup",
                    "subagent_ended",
                    "subagent_spawned",
                    "subagent_spawning",
                ],
            },
        ],
        "failures": [],
    }
    assert not (state_dir / "clawline.db").exists(), "listing plugins opens no store"


def test_table(clawline: Cli, state_dir: Path) -> None:
    _config(
        state_dir, '[plugins]\nentry_points = false\nenabled = ["tests.plugins.feature_plugin"]\n'
    )
    rows = [line.split(None, 3) for line in lines(clawline.ok("plugins"))]
    assert rows[0] == ["NAME", "SOURCE", "ORIGIN", "HOOKS"]
    assert rows[1 : 1 + len(BUILTINS)] == [
        [name, "builtin", origin, ", ".join(hooks)] for name, origin, hooks in BUILTINS
    ]
    assert rows[1 + len(BUILTINS)] == [
        "feature",
        "config",
        "tests.plugins.feature_plugin",
        ", ".join(REGISTRATION_HOOKS),
    ]
    assert len(rows) == 2 + len(BUILTINS)


def test_plugins_that_cannot_load_are_shown_and_fail_the_command(
    clawline: Cli, state_dir: Path
) -> None:
    _config(state_dir, '[plugins]\nentry_points = false\nenabled = ["tests.plugins.nowhere"]\n')
    result = clawline.run("plugins", "--format", "json")
    assert result.exit_code == 1
    assert result.stderr == "error: 1 plugin(s) could not be loaded\n"
    out = json.loads(result.stdout)
    assert [p["name"] for p in out["plugins"]] == [name for name, _, _ in BUILTINS]
    [failure] = out["failures"]
    assert (failure["name"], failure["source"]) == ("tests.plugins.nowhere", "config")
    assert failure["error"].startswith(
        "ModuleNotFoundError: No module named 'tests.plugins.nowhere'"
    )

    table = clawline.run("plugins")
    assert table.exit_code == 1
    assert "not loaded: tests.plugins.nowhere (config): ModuleNotFoundError" in table.stdout


def test_bad_plugin_config_is_an_input_error(clawline: Cli, state_dir: Path) -> None:
    _config(state_dir, "[plugins]\nenabled = 3\n")
    result = clawline.run("plugins")
    assert result.exit_code == 2
    assert result.stderr == "error: config: plugins.enabled must be a list of non-empty strings\n"
