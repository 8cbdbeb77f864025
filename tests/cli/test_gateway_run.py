"""``clawline gateway run`` as a real process: the ready line, HTTP, signals, refusals.

Every process a test starts is stopped by the ``gateway_process`` context manager, also when
the test fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("clawline")
READY = re.compile(r"clawline gateway listening on (ws://127\.0\.0\.1:(\d+))\n")
TOKEN = "run-token-secret-9"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CLAWLINE_")}
    return {**clean, "CLAWLINE_STATE_DIR": str(tmp_path / "state")}


class GatewayProcess:
    def __init__(
        self, process: subprocess.Popen[str], url: str, ready_line: str, web_line: str
    ) -> None:
        self.process = process
        self.url = url
        self.ready_line = ready_line
        self.web_line = web_line

    @property
    def http_url(self) -> str:
        return "http" + self.url[2:]

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 10) -> tuple[int, str, str]:
        """Send ``signum``; wait; return exit code, the rest of stdout, and stderr."""
        self.process.send_signal(signum)
        out, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, out, err


def _read_line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    return lines[0] if lines else ""


@contextlib.contextmanager
def gateway_process(env: dict[str, str], *args: str) -> Iterator[GatewayProcess]:
    process = subprocess.Popen(
        [str(SCRIPT), "gateway", "run", "--port", "0", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = _read_line(process, 20)
        match = READY.fullmatch(line)
        if match is None:
            process.kill()
            _, err = process.communicate(timeout=10)
            raise AssertionError(f"no ready line (got {line!r}); stderr: {err}")
        yield GatewayProcess(process, match.group(1), line, _read_line(process, 5))
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read()


def _clawline(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_ready_line_http_call_and_sigterm(env: dict[str, str], tmp_path: Path) -> None:
    with gateway_process({**env, "CLAWLINE_GATEWAY_TOKEN": TOKEN}) as gw:
        assert gw.web_line == f"web chat: {gw.http_url}/\n"  # the second and last line
        assert _get(gw.http_url + "/readyz") == (200, b'{"ok":true,"status":"live"}')
        runtime = json.loads((tmp_path / "state" / "gateway.json").read_text(encoding="utf-8"))
        assert runtime["url"] == gw.url
        called = _clawline(env, "gateway", "call", "health", "--url", gw.url, "--token", TOKEN)
        assert (called.returncode, called.stderr) == (0, "")
        assert json.loads(called.stdout)["status"] == "live"
        started = time.monotonic()
        code, out, err = gw.stop(signal.SIGTERM)
        assert code == 0, err
        assert time.monotonic() - started < 8
    assert out == ""  # the ready and web chat lines were all of stdout
    assert TOKEN not in err
    assert "SIGTERM received: shutting down" in err
    assert not (tmp_path / "state" / "gateway.json").exists()


def test_sigint_also_stops_cleanly(env: dict[str, str]) -> None:
    with gateway_process(env) as gw:
        code, out, err = gw.stop(signal.SIGINT)
    assert (code, out) == (0, "")
    assert "Traceback" not in err


def test_sessions_commands_use_the_running_gateway(env: dict[str, str], tmp_path: Path) -> None:
    with gateway_process({**env, "CLAWLINE_GATEWAY_TOKEN": TOKEN}) as gw:
        remote = {**env, "CLAWLINE_GATEWAY_URL": gw.url, "CLAWLINE_GATEWAY_TOKEN": TOKEN}
        made = _clawline(remote, "sessions", "create", "main", "--display-name", "Main")
        assert (made.returncode, made.stderr) == (0, "")
        child = _clawline(remote, "sessions", "create", "subagent:a", "--parent", "main")
        assert (child.returncode, child.stderr) == (0, "")
        tree = _clawline(remote, "sessions", "tree", "subagent:a")
        local = _clawline(env, "--local", "sessions", "tree", "subagent:a")
        assert tree.stdout.splitlines() == [
            'root agent:main:main ── "Main"  [-]',
            "└── agent:main:subagent:a  [-]  ◀",
        ]
        assert (tree.returncode, tree.stdout) == (local.returncode, local.stdout)
        missing = _clawline(remote, "sessions", "show", "nope")
        assert (missing.returncode, missing.stderr) == (
            1,
            "error: session not found: agent:main:nope\n",
        )
        code, _, _ = gw.stop()
        assert code == 0
    # with the gateway gone, a configured gateway is an error, --local still works
    down = _clawline(remote, "sessions", "list")
    assert down.returncode == 1
    assert down.stderr.startswith(f"error: cannot connect to {gw.url}/")
    assert _clawline(remote, "--local", "sessions", "list").returncode == 0


def test_lan_without_a_token_is_refused(env: dict[str, str]) -> None:
    result = _clawline(env, "gateway", "run", "--port", "0", "--bind", "lan")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "error: refusing to bind off loopback without a token: use --auth token with --token "
        "(or CLAWLINE_GATEWAY_TOKEN)\n"
    )


def test_token_auth_without_a_token_is_refused(env: dict[str, str]) -> None:
    result = _clawline(env, "gateway", "run", "--port", "0", "--auth", "token")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("error: gateway auth is token but no token is set")


def test_a_busy_port_is_one_error_line(env: dict[str, str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = _clawline(env, "gateway", "run", "--port", str(port))
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
