"""Signed artifact references, v2: round trip, tampering and every refusal."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest

from clawline.xworkmate.open_params import XWorkmateError
from clawline.xworkmate.refs import ArtifactRef, sign_ref, verify_ref, workspace_root_hash
from clawline.xworkmate.scope import TaskScope
from tests.xworkmate.xworkmate_support import SECRET

ROOT = Path("/srv/workspace")
SCOPE = TaskScope("agent:main:thread-main", "turn-1")
SHA = hashlib.sha256(b"x").hexdigest()


def ref(**overrides: Any) -> ArtifactRef:
    values: dict[str, Any] = {
        "workspace_root_hash": workspace_root_hash(ROOT),
        "session_scope": SCOPE.session_scope,
        "run_scope": SCOPE.relative,
        "artifact_scope": SCOPE.relative,
        "relative_path": "reports/final.md",
        "size_bytes": 1,
        "sha256": SHA,
    }
    values.update(overrides)
    return ArtifactRef(**values)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signed(payload: Any, secret: bytes = SECRET) -> str:
    """A reference with any payload, signed the way the plugin signs."""
    body = b64(json.dumps(payload).encode())
    return body + "." + b64(hmac.new(secret, body.encode(), hashlib.sha256).digest())


def verify(token: object, root: Path = ROOT, scope: TaskScope = SCOPE) -> ArtifactRef:
    return verify_ref(token, root=root, scope=scope, secret=SECRET)


def refused(token: object, message: str = "invalid artifactRef", **kwargs: Any) -> None:
    with pytest.raises(XWorkmateError) as caught:
        verify(token, **kwargs)
    assert str(caught.value) == message


def test_round_trip_and_payload_shape() -> None:
    token = sign_ref(ref(), SECRET)
    body, signature = token.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    assert payload == {
        "v": 2,
        "workspaceRootHash": hashlib.sha256(b"/srv/workspace").hexdigest(),
        "scopeKind": "task",
        "sessionScope": "tasks/agent_main_thread-main",
        "runScope": "tasks/agent_main_thread-main/turn-1",
        "artifactScope": "tasks/agent_main_thread-main/turn-1",
        "relativePath": "reports/final.md",
        "sizeBytes": 1,
        "sha256": SHA,
    }
    expected = hmac.new(SECRET, body.encode(), hashlib.sha256).digest()
    assert signature == b64(expected)
    assert verify(token) == ref()


def test_signatures_are_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def recording(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", recording)
    verify(sign_ref(ref(), SECRET))
    assert len(calls) == 1


def test_tampering_is_refused() -> None:
    token = sign_ref(ref(), SECRET)
    body, signature = token.split(".")
    other_body = sign_ref(ref(relative_path="reports/other.md"), SECRET).split(".")[0]
    refused(f"{other_body}.{signature}")
    flipped = signature[:-2] + ("A" if signature[-2] != "A" else "B") + signature[-1]
    refused(f"{body}.{flipped}")
    refused(sign_ref(ref(), b"another secret"))


@pytest.mark.parametrize(
    "token",
    [None, 7, "", "abc", "a.b.c", ".", "abc.", ".abc", "a b.c", "!!!.???"],
)
def test_malformed_tokens_are_refused(token: object) -> None:
    refused(token)


@pytest.mark.parametrize(
    "change",
    [
        {"v": 1},
        {"v": "2"},
        {"v": True},
        {"scopeKind": "workspace"},
        {"scopeKind": "workspace-latest"},
        {"artifactScope": None},
        {"artifactScope": ""},
        {"sha256": "abc"},
        {"sha256": SHA.upper()},
        {"sha256": SHA + "0"},
        {"runScope": "tasks/other/turn-1"},
        {"runScope": "tasks/agent_main_thread-main"},
        {"sizeBytes": -1},
        {"sizeBytes": "1"},
        {"relativePath": None},
    ],
)
def test_payloads_of_the_wrong_shape_are_refused(change: dict[str, Any]) -> None:
    payload = dict(ref().payload())
    payload.update(change)
    refused(signed({k: v for k, v in payload.items() if v is not None}))


def test_a_payload_that_is_not_an_object_is_refused() -> None:
    refused(signed(["v", 2]))
    body = b64(b"\xff\xfe")
    refused(body + "." + b64(hmac.new(SECRET, body.encode(), hashlib.sha256).digest()))


def test_another_workspace_is_refused() -> None:
    refused(
        sign_ref(ref(), SECRET),
        "artifactRef does not match workspace",
        root=Path("/srv/other"),
    )


@pytest.mark.parametrize(
    "scope",
    [TaskScope("agent:main:thread-main", "turn-2"), TaskScope("agent:main:other", "turn-1")],
)
def test_another_session_or_run_is_refused(scope: TaskScope) -> None:
    refused(sign_ref(ref(), SECRET), "artifactRef does not match sessionKey/runId", scope=scope)
