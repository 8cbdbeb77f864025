"""Which gateway: option, environment, config, runtime file, default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawline.client import configured_gateway, resolve_gateway
from clawline.config import ConfigError, Settings


def settings(tmp_path: Path, **gateway: object) -> Settings:
    return Settings(state_dir=tmp_path, raw={"gateway": gateway} if gateway else {})


def test_nothing_configured(tmp_path: Path) -> None:
    assert configured_gateway(settings(tmp_path), {}) is None
    target = resolve_gateway(settings(tmp_path), {})
    assert (target.url, target.token, target.source) == ("ws://127.0.0.1:18790", None, "default")
    port = resolve_gateway(settings(tmp_path, port=9), {"CLAWLINE_GATEWAY_PORT": "7"})
    assert port.url == "ws://127.0.0.1:7"


def test_option_beats_environment_beats_config(tmp_path: Path) -> None:
    config = settings(tmp_path, url="ws://config:1", token="t-config")
    env = {"CLAWLINE_GATEWAY_URL": "ws://env:2", "CLAWLINE_GATEWAY_TOKEN": "t-env"}
    chosen = configured_gateway(config, env, url="ws://opt:3", token="t-opt")
    assert chosen is not None
    assert (chosen.url, chosen.token, chosen.source) == ("ws://opt:3", "t-opt", "option")
    chosen = configured_gateway(config, env)
    assert chosen is not None
    assert (chosen.url, chosen.token, chosen.source) == ("ws://env:2", "t-env", "env")
    chosen = configured_gateway(config, {})
    assert chosen is not None
    assert (chosen.url, chosen.token, chosen.source) == ("ws://config:1", "t-config", "config")
    assert "t-config" not in repr(chosen)


def test_url_and_token_are_resolved_separately(tmp_path: Path) -> None:
    chosen = configured_gateway(
        settings(tmp_path, token="t-config"), {"CLAWLINE_GATEWAY_URL": "ws://env:2"}
    )
    assert chosen is not None
    assert (chosen.url, chosen.token) == ("ws://env:2", "t-config")


def test_runtime_file_is_a_fallback_only(tmp_path: Path) -> None:
    (tmp_path / "gateway.json").write_text(
        json.dumps({"url": "ws://0.0.0.0:4242", "pid": 1}), encoding="utf-8"
    )
    assert configured_gateway(settings(tmp_path), {}) is None
    target = resolve_gateway(settings(tmp_path), {})
    assert (target.url, target.source) == ("ws://127.0.0.1:4242", "runtime")
    (tmp_path / "gateway.json").write_text("{broken", encoding="utf-8")
    assert resolve_gateway(settings(tmp_path), {}).source == "default"


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"url": 5}, "config: gateway.url must be a non-empty string"),
        ({"url": " "}, "config: gateway.url must be a non-empty string"),
        ({"token": ["x"]}, "config: gateway.token must be a non-empty string"),
    ],
)
def test_bad_config_values_are_refused(
    tmp_path: Path, section: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_gateway(settings(tmp_path, **section), {})
    assert str(caught.value) == message


def test_gateway_section_must_be_a_table(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^config: gateway must be a table$"):
        configured_gateway(Settings(state_dir=tmp_path, raw={"gateway": 1}), {})
