"""``clawline gateway call``: one method, its payload as JSON; one ``error:`` line otherwise."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result

from clawline.client.identity import load_or_create_identity
from clawline.gateway.options import GatewaySettings
from clawline.pairing.scopes import READ
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing.gateway_thread import GatewayThread
from clawline.testing.pairing import pair_device

from .helpers import Cli

TOKEN = "call-token-7"


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[GatewayThread]:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    with GatewayThread(tmp_path / "gateway-state", gateway_settings=settings) as running:
        yield running


def call(clawline: Cli, *args: str, env: dict[str, str] | None = None) -> Result:
    base = {"CLAWLINE_STATE_DIR": str(clawline.state_dir)}
    return clawline.run("gateway", "call", *args, env={**base, **(env or {})})


def test_prints_the_payload_as_json(clawline: Cli, gateway: GatewayThread) -> None:
    result = call(clawline, "health", "--url", gateway.url, "--token", TOKEN)
    assert (result.exit_code, result.stderr) == (0, "")
    payload = json.loads(result.stdout)
    assert (payload["ok"], payload["status"]) == (True, "live")
    assert payload["bootId"] == gateway.running.gateway.bus.boot_id
    assert result.stdout.startswith('{\n  "ok": true,\n')


def test_params_are_sent(clawline: Cli, gateway: GatewayThread) -> None:
    result = call(
        clawline, "events.replay", "--params", '{"afterSeq": 0}', "--url", gateway.url,
        "--token", TOKEN,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["replayed"] == 0


def test_agent_prints_the_final_answer(clawline: Cli, gateway: GatewayThread) -> None:
    params = json.dumps({"message": "hi", "idempotencyKey": "cli-1", "sessionKey": "main"})
    result = call(clawline, "agent", "--params", params, "--url", gateway.url, "--token", TOKEN)
    assert result.exit_code == 0, result.output
    final = json.loads(result.stdout)
    assert (final["runId"], final["status"], final["summary"]) == ("cli-1", "ok", "completed")
    assert final["result"]["text"] == "echo: hi"


def test_url_and_token_from_environment_and_config(
    clawline: Cli, gateway: GatewayThread, state_dir: Path
) -> None:
    env = {"CLAWLINE_GATEWAY_URL": gateway.url, "CLAWLINE_GATEWAY_TOKEN": TOKEN}
    assert call(clawline, "health", env=env).exit_code == 0
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "config.toml").write_text(
        f'[gateway]\nurl = "{gateway.url}/ws"\ntoken = "{TOKEN}"\n', encoding="utf-8"
    )
    result = call(clawline, "health")
    assert (result.exit_code, result.stderr) == (0, "")
    refused = call(clawline, "health", "--token", "not-it")
    assert refused.exit_code == 1


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["nope"], "error: INVALID_REQUEST unknown method: nope"),
        (
            ["health", "--params", '{"x": 1}'],
            "error: INVALID_REQUEST invalid health params: unknown key 'x'",
        ),
        (
            ["agent.wait", "--params", '{"runId": "r", "timeoutMs": 5000}', "--timeout", "0.2"],
            "error: TIMEOUT agent.wait: no answer within 0.2s",
        ),
        (
            ["agent", "--params", '{"message": "x"}'],
            "error: INVALID_REQUEST invalid agent params: idempotencyKey is required",
        ),
    ],
)
def test_refusals_print_code_and_message(
    clawline: Cli, gateway: GatewayThread, args: list[str], line: str
) -> None:
    result = call(clawline, *args, "--url", gateway.url, "--token", TOKEN)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", line + "\n")


def test_wrong_token_is_refused_without_echoing_it(clawline: Cli, gateway: GatewayThread) -> None:
    result = call(clawline, "health", "--url", gateway.url, "--token", "s3cret-guess")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "error: INVALID_REQUEST unauthorized: gateway token mismatch\n"


def test_unreachable_gateway(clawline: Cli) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = call(clawline, "health", "--url", f"ws://127.0.0.1:{port}")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith(f"error: UNAVAILABLE cannot connect to ws://127.0.0.1:{port}/")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("params", "line"),
    [
        ("{x", "error: invalid --params: not JSON (Expecting property name enclosed in double "),
        ("[1]", "error: invalid --params: must be a JSON object"),
        ("3", "error: invalid --params: must be a JSON object"),
    ],
)
def test_bad_params_exit_2_before_connecting(clawline: Cli, params: str, line: str) -> None:
    result = call(clawline, "health", "--params", params, "--url", "ws://127.0.0.1:9")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(line)
    assert result.stderr.count("\n") == 1


def test_calls_are_signed_with_the_state_dir_device_identity(
    clawline: Cli, tmp_path: Path, state_dir: Path
) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN, require_device=True)
    with GatewayThread(tmp_path / "strict", gateway_settings=settings) as strict:
        # a gateway that grants scopes only to paired devices
        args = ("events.replay", "--params", '{"afterSeq": 0}', "--url", strict.url)
        unpaired = call(clawline, *args, "--token", TOKEN)
        assert unpaired.exit_code == 1
        assert unpaired.stderr == "error: INVALID_REQUEST missing scope: operator.read\n"
        assert (state_dir / "identity" / "device.pem").is_file()
        store = SQLiteStore(tmp_path / "strict" / "clawline.db")
        try:
            pair_device(store, load_or_create_identity(state_dir), (READ,))
        finally:
            store.close()
        result = call(clawline, *args, "--token", TOKEN)
        assert (result.exit_code, result.stderr) == (0, "")
