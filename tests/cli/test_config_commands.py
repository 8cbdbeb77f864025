"""``clawline config check`` and ``clawline config show`` (docs/config.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.cli.helpers import Cli

THREE_BAD = """\
[agents.defaults.subagents]
maxSpawnDepth = 9

[tools.sessions]
visibility = "everyone"

[gateway]
port = "http"
"""

SECRETS = """\
[gateway]
token = "gateway-secret-1"

[models.providers.local]
api = "openai"
apiKey = "sk-secret-2"

[acp.agents.codex]
command = ["codex-acp"]
env = { OPENAI_API_KEY = "sk-secret-3" }

[plugins.xworkmate]
artifactRefSigningSecret = "signing-secret-4"

[channels.matrix]
homeserver = "https://matrix.example.org"
userId = "@bot:example.org"
accessToken = "syt-secret-5"
password = "matrix-secret-6"
"""


def _clawline(state_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLAWLINE_STATE_DIR": str(state_dir)}
    env.pop("CLAWLINE_STORE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "clawline", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_check_prints_one_line_per_bad_value_and_exits_non_zero(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(THREE_BAD, encoding="utf-8")
    done = _clawline(tmp_path, "config", "check")
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "config: agents.defaults.subagents.maxSpawnDepth must be an integer from 1 to 5",
        'config: tools.sessions.visibility must be "self", "tree", "agent" or "all"',
        "config: gateway.port must be an integer from 0 to 65535",
    ]
    assert not (tmp_path / "clawline.db").exists()  # checking opens no store


def test_check_of_a_good_file_prints_nothing_and_exits_zero(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(SECRETS, encoding="utf-8")
    done = _clawline(tmp_path, "config", "check")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_check_reports_what_only_the_whole_configuration_shows(clawline: Cli) -> None:
    """A model naming an unknown provider, a LAN bind without a token: found past the file's
    own schema, each one line."""
    clawline.state_dir.mkdir(parents=True)
    (clawline.state_dir / "config.toml").write_text(
        '[agents.defaults]\nmodel = "nowhere/m1"\n\n[gateway]\nbind = "lan"\n', encoding="utf-8"
    )
    result = clawline.run("config", "check")
    assert result.exit_code == 1
    [model, gateway] = result.stdout.splitlines()
    assert model.startswith(
        'config: agents.defaults.model "nowhere/m1" is invalid: unknown provider'
    )
    assert gateway.startswith("refusing to bind off loopback without a token")


def test_check_of_a_file_that_is_not_toml_names_the_file(clawline: Cli) -> None:
    clawline.state_dir.mkdir(parents=True)
    (clawline.state_dir / "config.toml").write_text("[agents\n", encoding="utf-8")
    result = clawline.run("config", "check")
    assert result.exit_code == 1
    assert result.stdout.startswith(
        f"config: {clawline.state_dir / 'config.toml'} is not valid TOML"
    )


def test_show_prints_the_effective_configuration_with_secrets_masked(clawline: Cli) -> None:
    clawline.state_dir.mkdir(parents=True)
    (clawline.state_dir / "config.toml").write_text(SECRETS, encoding="utf-8")
    env = {
        "CLAWLINE_STATE_DIR": str(clawline.state_dir),
        "CLAWLINE_STORE_URL": "sqlite:///elsewhere.db",
        "CLAWLINE_GATEWAY_PORT": "18800",
    }
    result = clawline.run("config", "show", env=env)
    assert result.exit_code == 0, result.output
    secrets = ("gateway-secret-1", "sk-secret-2", "sk-secret-3", "signing-secret-4")
    for secret in (*secrets, "syt-secret-5", "matrix-secret-6"):
        assert secret not in result.stdout
    shown = tomllib.loads(result.stdout)
    assert shown["gateway"]["token"] == "**********"
    assert shown["models"]["providers"]["local"]["apiKey"] == "**********"
    assert shown["acp"]["agents"]["codex"]["env"] == {"OPENAI_API_KEY": "**********"}
    assert shown["plugins"]["xworkmate"]["artifactRefSigningSecret"] == "**********"
    matrix = shown["channels"]["matrix"]
    assert (matrix["accessToken"], matrix["password"]) == ("**********", "**********")
    # the environment's overrides, and the defaults the file left out
    assert shown["store"]["url"] == "sqlite:///elsewhere.db"
    assert shown["gateway"]["port"] == 18800
    assert shown["agents"]["defaults"]["subagents"]["maxSpawnDepth"] == 1
    as_json = json.loads(clawline.run("config", "show", "--json", env=env).stdout)
    assert as_json == shown
