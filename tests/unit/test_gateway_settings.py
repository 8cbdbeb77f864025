"""Gateway settings: options over environment over config, parsing and validation (the
security refusals are in tests/gateway/test_security_settings.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawline.config import DEFAULT_PORT, ConfigError, Settings
from clawline.gateway.frames import MAX_BUFFERED_BYTES, MAX_PAYLOAD, MAX_PREAUTH_FRAME
from clawline.gateway.options import GatewaySettings, resolve_gateway_settings

SECRET = "s3cret-token-value"


def resolve(
    section: dict[str, Any] | None = None, env: dict[str, str] | None = None, **options: Any
) -> GatewaySettings:
    raw = {"gateway": section} if section is not None else {}
    settings = Settings(state_dir=Path("/nonexistent"), raw=raw)
    return resolve_gateway_settings(settings, env=env or {}, **options)


def test_defaults_are_loopback_without_auth_on_the_default_port() -> None:
    chosen = resolve()
    assert chosen == GatewaySettings()
    assert chosen.port == DEFAULT_PORT == 18790
    assert chosen.bind == "loopback"
    assert chosen.host == "127.0.0.1"
    assert chosen.auth == "none"
    assert chosen.token is None
    assert chosen.require_device is False


def test_default_limits_match_the_protocol_constants() -> None:
    chosen = GatewaySettings()
    assert chosen.max_payload == MAX_PAYLOAD == 25 * 1024 * 1024
    assert chosen.max_buffered_bytes == MAX_BUFFERED_BYTES == 50 * 1024 * 1024
    assert chosen.preauth_frame_limit == MAX_PREAUTH_FRAME == 64 * 1024
    assert chosen.tick_interval_ms == 30_000


def test_lan_binds_every_interface() -> None:
    chosen = resolve(bind="lan", token=SECRET)
    assert chosen.host == "0.0.0.0"
    assert chosen.auth == "token"


def test_a_token_turns_token_auth_on() -> None:
    assert resolve(token=SECRET).auth == "token"
    assert resolve(env={"CLAWLINE_GATEWAY_TOKEN": SECRET}).token == SECRET
    assert resolve({"token": SECRET}).token == SECRET


def test_options_win_over_environment_over_config() -> None:
    env = {"CLAWLINE_GATEWAY_PORT": "2000", "CLAWLINE_GATEWAY_TOKEN": "from-env"}
    section = {"port": 3000, "token": "from-config"}
    assert resolve(section, env).port == 2000
    assert resolve(section, env).token == "from-env"
    assert resolve(section, env, port=1000, token="from-option").port == 1000
    assert resolve(section, env, token="from-option").token == "from-option"
    assert resolve(section).port == 3000
    assert resolve(section).token == "from-config"


def test_port_zero_is_allowed_for_an_ephemeral_port() -> None:
    assert resolve(port=0).port == 0


@pytest.mark.parametrize("port", [-1, 65536, "http", True, None, 1.5])
def test_bad_ports_are_refused(port: Any) -> None:
    with pytest.raises(
        ConfigError, match=r"^config: gateway\.port must be an integer from 0 to 65535$"
    ):
        resolve({"port": port} if port is not None else {"port": []})


def test_bad_port_in_the_environment_is_refused() -> None:
    with pytest.raises(ConfigError, match="gateway port must be an integer"):
        resolve(env={"CLAWLINE_GATEWAY_PORT": "eighty"})


@pytest.mark.parametrize("token", ["", "   ", 42])
def test_blank_or_non_string_tokens_are_refused(token: Any) -> None:
    with pytest.raises(ConfigError, match="token must be a non-empty string"):
        resolve({"token": token})


def test_auth_none_drops_a_configured_token() -> None:
    chosen = resolve({"auth": "none"}, token=SECRET)
    assert chosen.auth == "none"
    assert chosen.token is None


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"bind": "public"}, 'bind must be "loopback" or "lan"'),
        ({"auth": "password"}, 'auth must be "token" or "none"'),
        ({"require_device": "yes"}, "require_device must be true or false"),
    ],
)
def test_bad_config_values_are_refused(section: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve(section)


def test_gateway_section_must_be_a_table() -> None:
    with pytest.raises(ConfigError, match=r"^config: gateway must be a table$"):
        Settings(state_dir=Path("/nonexistent"), raw={"gateway": "loopback"})


def test_require_device_comes_from_config() -> None:
    assert resolve({"require_device": True}).require_device is True
