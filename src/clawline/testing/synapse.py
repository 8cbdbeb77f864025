"""A real Matrix homeserver (Synapse, SQLite) on ``127.0.0.1`` for a test's lifetime.

:func:`running_synapse` (``async with``) and :func:`synapse_process` (``with``, for fixtures that
outlive one event loop) write a ``homeserver.yaml`` into a directory of the test's, start
``python -m synapse.app.homeserver`` as a subprocess, wait until the client API answers, and
stop the process on exit (SIGTERM, then SIGKILL after a grace). The server federates with
nobody, reaches no key server, has presence and URL previews off and its rate limits out of
reach (a benchmark sends thousands of messages). Users are made with the shared-secret admin
registration API (:meth:`Synapse.register`); open registration is off.

The harness is plain standard library and needs the ``matrix-synapse`` package (the ``dev``
extra) in the interpreter that runs the tests: the server runs on ``sys.executable``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from base64 import b64encode
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from clawline.errors import Unavailable

__all__ = [
    "MatrixUser",
    "Synapse",
    "SynapseError",
    "running_synapse",
    "synapse_process",
]

START_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0
POLL_S = 0.05
LOG_TAIL_LINES = 40
PORT_ATTEMPTS = 3
UNLIMITED = {"per_second": 1_000_000, "burst_count": 1_000_000}
"""A rate limit no test or benchmark reaches."""


class SynapseError(Unavailable):
    """Synapse did not start, stopped early, or refused a request of the harness."""


@dataclass(frozen=True, slots=True)
class MatrixUser:
    """A user registered on the test homeserver, with a logged-in device."""

    user_id: str
    """``@localpart:server_name``."""
    localpart: str
    password: str
    access_token: str
    device_id: str


@dataclass(slots=True)
class Synapse:
    """A running Synapse homeserver (see :func:`running_synapse`)."""

    directory: Path
    """Where its configuration, SQLite database, media, signing key and logs are."""
    server_name: str
    port: int
    process: subprocess.Popen[bytes]
    registration_secret: str = field(repr=False)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``: the client-server API (and the admin API)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        """Synapse's log (INFO and above, without the access log's line per request)."""
        return self.directory / "homeserver.log"

    @property
    def output_path(self) -> Path:
        """The process's stdout and stderr (errors before logging is set up land here)."""
        return self.directory / "synapse.out"

    def user_id(self, localpart: str) -> str:
        return f"@{localpart}:{self.server_name}"

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of the process's output and of its log."""
        parts = []
        for path in (self.output_path, self.log_path):
            if path.exists():
                text = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {path.name} ---\n" + "\n".join(text))
        return "\n".join(parts) or "(no output)"

    async def register(self, localpart: str, password: str, *, admin: bool = False) -> MatrixUser:
        """Register ``localpart`` with the shared-secret admin API; it comes back logged in."""
        return await asyncio.to_thread(self.register_blocking, localpart, password, admin=admin)

    def register_blocking(
        self, localpart: str, password: str, *, admin: bool = False
    ) -> MatrixUser:
        """:meth:`register` for blocking code (a fixture outside an event loop)."""
        endpoint = f"{self.url}/_synapse/admin/v1/register"
        nonce = str(_request_json("GET", endpoint)["nonce"])
        body = {
            "nonce": nonce,
            "username": localpart,
            "password": password,
            "admin": admin,
            "mac": registration_mac(self.registration_secret, nonce, localpart, password, admin),
        }
        answer = _request_json("POST", endpoint, body)
        return MatrixUser(
            user_id=str(answer["user_id"]),
            localpart=localpart,
            password=password,
            access_token=str(answer["access_token"]),
            device_id=str(answer["device_id"]),
        )

    @property
    def running(self) -> bool:
        return self.process.poll() is None


def registration_mac(secret: str, nonce: str, user: str, password: str, admin: bool) -> str:
    """The HMAC-SHA1 that ``/_synapse/admin/v1/register`` checks, as hex."""
    mac = hmac.new(secret.encode(), digestmod=hashlib.sha1)
    for part in (nonce, user, password):
        mac.update(part.encode())
        mac.update(b"\x00")
    mac.update(b"admin" if admin else b"notadmin")
    return mac.hexdigest()


@contextlib.asynccontextmanager
async def running_synapse(
    directory: Path,
    *,
    server_name: str = "localhost",
    start_timeout: float = START_TIMEOUT_S,
) -> AsyncIterator[Synapse]:
    """Start Synapse with its files in ``directory``; stop it on exit (also when the body fails).

    Raises :class:`SynapseError` with the tail of its log when it does not come up within
    ``start_timeout`` seconds or exits first.
    """
    synapse = await asyncio.to_thread(_start, directory, server_name, start_timeout)
    try:
        yield synapse
    finally:
        await asyncio.to_thread(_stop, synapse.process)


@contextlib.contextmanager
def synapse_process(
    directory: Path,
    *,
    server_name: str = "localhost",
    start_timeout: float = START_TIMEOUT_S,
) -> Iterator[Synapse]:
    """:func:`running_synapse` for blocking code, e.g. a module-scoped pytest fixture."""
    synapse = _start(directory, server_name, start_timeout)
    try:
        yield synapse
    finally:
        _stop(synapse.process)


def _start(directory: Path, server_name: str, start_timeout: float) -> Synapse:
    directory.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_hex(32)
    _write_signing_key(directory / "signing.key")
    _write_log_config(directory)
    for attempt in range(PORT_ATTEMPTS):
        port = _free_port()
        config = directory / "homeserver.yaml"
        config.write_text(json.dumps(homeserver_config(directory, server_name, port, secret)))
        synapse = Synapse(
            directory=directory,
            server_name=server_name,
            port=port,
            process=_spawn(directory, config),
            registration_secret=secret,
        )
        try:
            _wait_until_ready(synapse, start_timeout)
        except SynapseError:
            _stop(synapse.process)
            # Another process took the port between our probe and Synapse's bind: try again.
            if "Address already in use" in synapse.log_tail() and attempt + 1 < PORT_ATTEMPTS:
                continue
            raise
        return synapse
    raise AssertionError("unreachable")  # pragma: no cover


def homeserver_config(directory: Path, server_name: str, port: int, secret: str) -> dict[str, Any]:
    """Synapse's configuration (``homeserver.yaml``; JSON is YAML) for a test server."""
    return {
        "server_name": server_name,
        "public_baseurl": f"http://127.0.0.1:{port}/",
        "pid_file": str(directory / "homeserver.pid"),
        "listeners": [
            {
                "port": port,
                "bind_addresses": ["127.0.0.1"],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                "resources": [{"names": ["client"], "compress": False}],
            }
        ],
        "database": {"name": "sqlite3", "args": {"database": str(directory / "homeserver.db")}},
        "log_config": str(directory / "log.yaml"),
        "media_store_path": str(directory / "media"),
        "signing_key_path": str(directory / "signing.key"),
        "registration_shared_secret": secret,
        "macaroon_secret_key": secrets.token_hex(32),
        "form_secret": secrets.token_hex(32),
        "report_stats": False,
        "enable_metrics": False,
        "enable_registration": False,
        "presence": {"enabled": False},
        "url_preview_enabled": False,
        "suppress_key_server_warning": True,
        "trusted_key_servers": [],
        "federation_domain_whitelist": [],  # federate with nobody
        "rc_message": UNLIMITED,
        "rc_registration": UNLIMITED,
        "rc_login": {"address": UNLIMITED, "account": UNLIMITED, "failed_attempts": UNLIMITED},
        "rc_joins": {"local": UNLIMITED, "remote": UNLIMITED},
        "rc_joins_per_room": UNLIMITED,
        "rc_invites": {"per_room": UNLIMITED, "per_user": UNLIMITED, "per_issuer": UNLIMITED},
        "rc_third_party_invite": UNLIMITED,
        "rc_room_creation": UNLIMITED,
        "rc_admin_redaction": UNLIMITED,
        "rc_3pid_validation": UNLIMITED,
        "rc_key_requests": UNLIMITED,
        "rc_media_create": UNLIMITED,
        "rc_presence": {"per_user": UNLIMITED},
        "rc_delayed_event_mgmt": UNLIMITED,
        "rc_reports": UNLIMITED,
        "rc_user_directory": UNLIMITED,
        "rc_profile": UNLIMITED,
    }


def _write_signing_key(path: Path) -> None:
    # Synapse's key file: "<algorithm> <version> <unpadded base64 of the 32-byte seed>".
    seed = Ed25519PrivateKey.generate().private_bytes(
        Encoding.Raw, PrivateFormat.Raw, NoEncryption()
    )
    path.write_text(f"ed25519 a_{secrets.token_hex(2)} {b64encode(seed).decode().rstrip('=')}\n")
    path.chmod(0o600)


def _write_log_config(directory: Path) -> None:
    # Everything to a file; the access log (one line per request) and SQL chatter stay quiet.
    config = {
        "version": 1,
        "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
        "handlers": {
            "file": {
                "class": "logging.FileHandler",
                "formatter": "plain",
                "filename": str(directory / "homeserver.log"),
            }
        },
        "loggers": {
            "synapse.access": {"level": "WARNING"},
            "synapse.storage.SQL": {"level": "WARNING"},
        },
        "root": {"level": "INFO", "handlers": ["file"]},
        "disable_existing_loggers": False,
    }
    (directory / "log.yaml").write_text(json.dumps(config))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _spawn(directory: Path, config: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNAPSE_")}
    env.pop("PYTHONWARNINGS", None)  # the server's own deprecation warnings are not the test's
    with (directory / "synapse.out").open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "synapse.app.homeserver", "-c", str(config)],
            cwd=directory,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a terminal's Ctrl-C goes to the test runner, not here
        )


def _wait_until_ready(synapse: Synapse, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    versions = f"{synapse.url}/_matrix/client/versions"
    while True:
        if not synapse.running:
            raise SynapseError(
                f"Synapse exited with {synapse.process.returncode} before it was ready\n"
                + synapse.log_tail()
            )
        # Refused until it listens (URLError is an OSError).
        with contextlib.suppress(OSError), urllib.request.urlopen(versions, timeout=1.0) as answer:
            if answer.status == 200:
                return
        if time.monotonic() >= deadline:
            raise SynapseError(
                f"Synapse did not answer {versions} within {timeout} s\n" + synapse.log_tail()
            )
        time.sleep(POLL_S)


def _stop(process: subprocess.Popen[bytes], grace: float = STOP_GRACE_S) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _request_json(method: str, url: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30.0) as answer:
            result: dict[str, Any] = json.load(answer)
            return result
    except urllib.error.HTTPError as error:
        detail = error.read().decode(errors="replace")
        raise SynapseError(f"{method} {url} answered {error.code}: {detail}") from None
