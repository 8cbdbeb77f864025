"""Secure defaults: loopback unless a token protects the gateway; the token is never shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawline.config import ConfigError, Settings
from clawline.gateway.options import GatewaySettings, resolve_gateway_settings

SECRET = "very-secret-gateway-token"


def resolve(section: dict[str, Any] | None = None, **options: Any) -> GatewaySettings:
    env = options.pop("env", {})
    settings = Settings(state_dir=Path("/nonexistent"), raw={"gateway": section or {}})
    return resolve_gateway_settings(settings, env=env, **options)


def test_the_default_bind_is_loopback() -> None:
    assert GatewaySettings().bind == "loopback"
    assert GatewaySettings().host == "127.0.0.1"
    chosen = resolve()
    assert chosen.bind == "loopback"
    assert chosen.host == "127.0.0.1"


@pytest.mark.parametrize(
    ("section", "options"),
    [
        ({}, {"bind": "lan"}),
        ({"bind": "lan"}, {}),
        ({}, {"env": {"CLAWLINE_GATEWAY_BIND": "lan"}}),
        ({"bind": "lan", "auth": "none"}, {"token": SECRET}),
        ({}, {"bind": "lan", "auth": "none", "token": SECRET}),
    ],
)
def test_binding_to_the_lan_without_a_token_is_refused(
    section: dict[str, Any], options: dict[str, Any]
) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve(section, **options)
    assert caught.value.message == (
        "refusing to bind off loopback without a token: use --auth token with --token "
        "(or CLAWLINE_GATEWAY_TOKEN)"
    )
    assert SECRET not in caught.value.message


def test_binding_to_the_lan_with_a_token_is_allowed() -> None:
    chosen = resolve({"bind": "lan"}, env={"CLAWLINE_GATEWAY_TOKEN": SECRET})
    assert (chosen.bind, chosen.auth, chosen.token) == ("lan", "token", SECRET)


@pytest.mark.parametrize(
    ("section", "options"),
    [({}, {"auth": "token"}), ({"auth": "token"}, {}), ({"auth": "token", "bind": "lan"}, {})],
)
def test_token_auth_without_a_token_is_refused(
    section: dict[str, Any], options: dict[str, Any]
) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve(section, **options)
    assert caught.value.message == (
        "gateway auth is token but no token is set (use --token or CLAWLINE_GATEWAY_TOKEN)"
    )


def test_the_token_is_not_in_the_settings_repr() -> None:
    for chosen in (GatewaySettings(auth="token", token=SECRET), resolve(token=SECRET)):
        assert chosen.token == SECRET
        assert SECRET not in repr(chosen)
        assert SECRET not in str(chosen)
        assert SECRET not in f"{chosen!r} {chosen}"
