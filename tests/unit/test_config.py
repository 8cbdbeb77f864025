"""load_settings: state directory, config.toml and environment overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawline.config import ConfigError, Settings, load_settings, parse_config, state_dir_from
from clawline.errors import InvalidInput


def write_config(state: Path, text: str | bytes) -> None:
    state.mkdir(parents=True, exist_ok=True)
    path = state / "config.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def settings(state: Path, **env: str) -> Settings:
    return load_settings({"CLAWLINE_STATE_DIR": str(state), **env})


def test_defaults_without_a_config_file(tmp_path: Path) -> None:
    result = settings(tmp_path / "state")
    assert result.state_dir == tmp_path / "state"
    assert result.store_url is None
    assert result.default_agent_id == "main"
    assert result.main_key == "main"
    assert result.raw == {}
    assert result.config_path == tmp_path / "state" / "config.toml"
    assert result.sqlite_path == tmp_path / "state" / "clawline.db"


def test_state_dir_defaults_to_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert state_dir_from({}) == tmp_path / ".clawline"
    assert state_dir_from({"CLAWLINE_STATE_DIR": "   "}) == tmp_path / ".clawline"
    assert state_dir_from({"CLAWLINE_STATE_DIR": "~/elsewhere"}) == tmp_path / "elsewhere"
    assert load_settings({}).state_dir == tmp_path / ".clawline"


def test_load_settings_reads_os_environ(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CLAWLINE_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("CLAWLINE_STORE_URL", "sqlite:///x.db")
    result = load_settings()
    assert result.state_dir == tmp_path
    assert result.store_url == "sqlite:///x.db"


def test_config_file_values(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        """
        [store]
        url = "postgresql://127.0.0.1/clawline"

        [sessions]
        default_agent = "Ops"
        main_key = "Work"

        [gateway]
        port = 18789
        """,
    )
    result = settings(tmp_path)
    assert result.store_url == "postgresql://127.0.0.1/clawline"
    assert result.default_agent_id == "ops"
    assert result.main_key == "work"
    assert result.raw["gateway"] == {"port": 18789}


def test_environment_wins_over_the_file(tmp_path: Path) -> None:
    write_config(tmp_path, '[store]\nurl = "postgresql://from-file/db"\n')
    assert (
        settings(tmp_path, CLAWLINE_STORE_URL=" sqlite:///env.db ").store_url == "sqlite:///env.db"
    )
    # a blank variable does not hide the file's value
    assert settings(tmp_path, CLAWLINE_STORE_URL="  ").store_url == "postgresql://from-file/db"


def test_empty_url_in_file_means_default(tmp_path: Path) -> None:
    write_config(tmp_path, '[store]\nurl = ""\n')
    assert settings(tmp_path).store_url is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("store = 1\n", "config: store must be a table"),
        ('sessions = "x"\n', "config: sessions must be a table"),
        (
            "[store]\nurl = 5\n",
            "config: store.url must be a store URL (sqlite:///… or postgresql://…)",
        ),
        (
            '[store]\nurl = ["a"]\n',
            "config: store.url must be a store URL (sqlite:///… or postgresql://…)",
        ),
        (
            '[sessions]\ndefault_agent = "-bad"\n',
            "config: sessions.default_agent must be a valid agent id",
        ),
        (
            "[sessions]\ndefault_agent = 7\n",
            "config: sessions.default_agent must be a valid agent id",
        ),
        (
            '[sessions]\ndefault_agent = ""\n',
            "config: sessions.default_agent must be a valid agent id",
        ),
        (
            '[sessions]\nmain_key = ""\n',
            "config: sessions.main_key must be 1-64 letters, digits, '.', '_' or '-'",
        ),
        (
            '[sessions]\nmain_key = "a:b"\n',
            "config: sessions.main_key must be 1-64 letters, digits, '.', '_' or '-'",
        ),
        (
            "[sessions]\nmain_key = 1\n",
            "config: sessions.main_key must be 1-64 letters, digits, '.', '_' or '-'",
        ),
    ],
)
def test_invalid_values(tmp_path: Path, text: str, message: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        settings(tmp_path)
    assert str(caught.value) == message
    assert isinstance(caught.value, InvalidInput)


@pytest.mark.parametrize("text", ["[store\nurl = 1", "url = ", b'[store]\nurl = "\xff"\n'])
def test_unreadable_toml(tmp_path: Path, text: str | bytes) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        settings(tmp_path)
    assert str(caught.value).startswith(f"config: {tmp_path / 'config.toml'} is not valid TOML: ")


def test_a_directory_named_config_toml_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "config.toml").mkdir()
    assert settings(tmp_path).store_url is None


# --- regressions of bugs found and fixed ----------------------------------------------------


def test_main_key_with_whitespace_is_refused(tmp_path: Path) -> None:
    write_config(tmp_path, '[sessions]\nmain_key = "my main"\n')
    with pytest.raises(ConfigError):
        settings(tmp_path)


def test_default_agent_with_trailing_newline_is_refused(tmp_path: Path) -> None:
    write_config(tmp_path, '[sessions]\ndefault_agent = "main\\n"\n')
    with pytest.raises(ConfigError):
        settings(tmp_path)


def test_channel_secrets_come_from_the_file_the_environment_or_a_secret_file(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "secret"
    secret.write_text("  from-a-file\n", encoding="utf-8")
    homeserver = {"homeserver": "https://m.example.org", "userId": "@bot:example.org"}
    tables = {
        "matrix": {**homeserver, "accessTokenFile": str(secret), "passwordEnv": "PW"},
        "webhook": {"tokenEnv": "OUT", "tokenFile": str(secret), "inboundTokenFile": str(secret)},
        "telegram": {"botToken": "in-the-config", "botTokenFile": str(secret)},
    }
    channels = parse_config({"channels": tables}).channels
    assert channels.matrix is not None
    assert channels.webhook is not None
    assert channels.telegram is not None
    env = {"PW": "from-the-env", "OUT": "out-from-the-env"}
    assert channels.matrix.token(env) == "from-a-file"
    assert channels.matrix.login_password(env) == "from-the-env"
    assert channels.webhook.outbound_token(env) == "out-from-the-env"  # the variable first
    assert channels.webhook.outbound_token({}) == "from-a-file"  # then the file
    assert channels.webhook.inbound_secret({}) == "from-a-file"
    assert channels.telegram.token({}) == "in-the-config"
    secret.unlink()
    assert channels.matrix.token(env) is None  # an unreadable file is no secret


def test_a_matrix_table_without_any_credential_is_refused() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(
            {"channels": {"matrix": {"homeserver": "https://m.org", "userId": "@b:m.org"}}}
        )
    assert str(refused.value) == (
        "config: channels.matrix needs an access token or a password (accessToken,"
        " accessTokenEnv, accessTokenFile, password, passwordEnv or passwordFile)"
    )
