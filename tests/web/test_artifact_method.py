"""What the web chat's artifact download relies on, over the wire: ``xworkmate.artifacts.read``
by the signed reference ``xworkmate.artifacts.list`` gave returns the file's bytes; a path that
leaves the workspace — ``..``, an absolute path, a symlink pointing out — or a forged reference
is refused with a typed error and reads nothing; a file above ``maxInlineBytes`` is described
without its content (docs/web.md, "Artifacts")."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clawline.testing.live_gateway import RunningGateway
from tests.gateway.wire import WireClient
from tests.web.conftest import CONFIG, TOKEN

INLINE_LIMIT = 64
OUTSIDE = "relativePath must stay inside the workspace"
SECRET = b"not for the web chat\n"


@pytest.fixture
def gateway_config() -> dict[str, Any]:
    return {
        **CONFIG,
        "plugins": {
            "enabled": ["clawline.xworkmate"],
            "xworkmate": {"maxInlineBytes": INLINE_LIMIT},
        },
    }


@pytest.fixture
async def reader(web_gateway: RunningGateway) -> AsyncIterator[WireClient]:
    """A read-only operator client, as the page's requests need no more."""
    opened = await WireClient.open(web_gateway.url, "/ws")
    try:
        assert (await opened.connect(token=TOKEN, scopes=["operator.read"]))["ok"] is True
        yield opened
    finally:
        await opened.close()


def workspace(gateway: RunningGateway) -> Path:
    return gateway.runtime.agents_config.resolve_agent("main").workspace


async def listed(reader: WireClient, run: dict[str, str]) -> dict[str, dict[str, Any]]:
    frame = await reader.call("xworkmate.artifacts.list", run)
    assert frame["ok"] is True, frame
    return {item["relativePath"]: item for item in frame["payload"]["artifacts"]}


async def refused(reader: WireClient, params: dict[str, Any]) -> dict[str, Any]:
    frame = await reader.call("xworkmate.artifacts.read", params)
    assert frame["ok"] is False, frame
    error: dict[str, Any] = frame["error"]
    assert error["code"] == "INVALID_REQUEST"
    assert error["details"]["errorType"] == "InvalidInput"
    assert SECRET.decode() not in json.dumps(frame)
    return error


async def test_read_by_reference_and_nothing_outside(
    web_gateway: RunningGateway, reader: WireClient, tmp_path: Path
) -> None:
    root = workspace(web_gateway)
    (root / "reports").mkdir(parents=True)
    (root / "reports" / "summary.md").write_bytes(b"all good\n")
    (root / "reports" / "big.bin").write_bytes(bytes(range(256)) * 2)
    secret = tmp_path / "secret.txt"
    secret.write_bytes(SECRET)
    (root / "reports" / "link.md").symlink_to(secret)
    run = {"openclawSessionKey": "agent:main:main", "runId": "run-1"}

    # The list gives sizes and references, and never follows the symlink.
    items = await listed(reader, run)
    assert sorted(items) == ["reports/big.bin", "reports/summary.md"]
    assert items["reports/summary.md"]["sizeBytes"] == 9
    assert items["reports/big.bin"]["sizeBytes"] == 512

    # By its reference: the bytes, base64.
    ref = items["reports/summary.md"]["artifactRef"]
    frame = await reader.call("xworkmate.artifacts.read", {**run, "artifactRef": ref})
    assert frame["ok"] is True, frame
    (artifact,) = frame["payload"]["artifacts"]
    assert artifact["encoding"] == "base64"
    assert base64.b64decode(artifact["content"]) == b"all good\n"

    # Above maxInlineBytes: described, not inlined.
    frame = await reader.call(
        "xworkmate.artifacts.read", {**run, "artifactRef": items["reports/big.bin"]["artifactRef"]}
    )
    assert frame["ok"] is True, frame
    (big,) = frame["payload"]["artifacts"]
    assert big["sizeBytes"] == 512
    assert "content" not in big

    # Out of the workspace, by any road: refused, typed, nothing read.
    scope = items["reports/summary.md"]["artifactScope"]
    for path in ("../../secret.txt", str(secret), "reports/../../secret.txt", "reports/link.md"):
        error = await refused(reader, {**run, "artifactScope": scope, "relativePath": path})
        assert error["message"] == OUTSIDE, path

    # A reference that was not signed by this gateway, or names another path: refused.
    body, signature = ref.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["relativePath"] = "../secret.txt"
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    error = await refused(reader, {**run, "artifactRef": f"{forged}.{signature}"})
    assert error["message"] == "invalid artifactRef"
    error = await refused(reader, {**run, "artifactRef": ref, "relativePath": "reports/big.bin"})
    assert error["message"] == "artifactRef does not match relativePath"
