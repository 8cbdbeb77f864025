"""Signed artifact references, version 2.

``artifactRef = base64url(JSON payload) + "." + base64url(HMAC-SHA256(secret, body))`` where
the payload binds the reference to one workspace, one session's run and one file's content::

    {v:2, workspaceRootHash, scopeKind:"task", sessionScope:"tasks/<seg>",
     runScope:"tasks/<seg>/<seg>", artifactScope, relativePath, sizeBytes, sha256}

Verification compares signatures in constant time, then checks the payload's shape (anything
wrong is ``invalid artifactRef``, version 1 refs included), then the workspace
(``artifactRef does not match workspace``) and the session and run
(``artifactRef does not match sessionKey/runId``). References do not expire.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from pathlib import Path

from clawline.xworkmate.open_params import XWorkmateError
from clawline.xworkmate.scope import TaskScope

INVALID = "invalid artifactRef"
WRONG_WORKSPACE = "artifactRef does not match workspace"
WRONG_RUN = "artifactRef does not match sessionKey/runId"
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class ArtifactRef:
    workspace_root_hash: str
    session_scope: str
    run_scope: str
    artifact_scope: str
    relative_path: str
    size_bytes: int
    sha256: str

    def payload(self) -> dict[str, object]:
        return {
            "v": 2,
            "workspaceRootHash": self.workspace_root_hash,
            "scopeKind": "task",
            "sessionScope": self.session_scope,
            "runScope": self.run_scope,
            "artifactScope": self.artifact_scope,
            "relativePath": self.relative_path,
            "sizeBytes": self.size_bytes,
            "sha256": self.sha256,
        }


def workspace_root_hash(root: Path) -> str:
    """sha256 (hex) of the resolved workspace root's path."""
    return hashlib.sha256(str(root).encode()).hexdigest()


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    if not text or not re.fullmatch(r"[A-Za-z0-9_-]+", text):
        raise XWorkmateError(INVALID)
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise XWorkmateError(INVALID) from None


def _signature(secret: bytes, body: str) -> bytes:
    return hmac.new(secret, body.encode("ascii"), hashlib.sha256).digest()


def sign_ref(ref: ArtifactRef, secret: bytes) -> str:
    body = _b64encode(json.dumps(ref.payload(), separators=(",", ":")).encode())
    return f"{body}.{_b64encode(_signature(secret, body))}"


def _parse(payload: object) -> ArtifactRef:
    if not isinstance(payload, dict):
        raise XWorkmateError(INVALID)
    strings = ("workspaceRootHash", "sessionScope", "runScope", "artifactScope", "relativePath")
    size = payload.get("sizeBytes")
    sha = payload.get("sha256")
    valid = (
        type(payload.get("v")) is int
        and payload.get("v") == 2
        and payload.get("scopeKind") == "task"
        and all(isinstance(payload.get(name), str) and payload.get(name) for name in strings)
        and type(size) is int
        and size >= 0
        and isinstance(sha, str)
        and _SHA256.fullmatch(sha) is not None
        and str(payload["runScope"]).startswith(str(payload["sessionScope"]) + "/")
    )
    if not valid or not isinstance(size, int) or not isinstance(sha, str):
        raise XWorkmateError(INVALID)
    return ArtifactRef(
        workspace_root_hash=payload["workspaceRootHash"],
        session_scope=payload["sessionScope"],
        run_scope=payload["runScope"],
        artifact_scope=payload["artifactScope"],
        relative_path=payload["relativePath"],
        size_bytes=size,
        sha256=sha,
    )


def verify_ref(token: object, *, root: Path, scope: TaskScope, secret: bytes) -> ArtifactRef:
    """The payload of a reference issued for workspace ``root`` and ``scope``'s run."""
    if not isinstance(token, str):
        raise XWorkmateError(INVALID)
    parts = token.strip().split(".")
    if len(parts) != 2:
        raise XWorkmateError(INVALID)
    body, signature = parts
    provided = _b64decode(signature)
    raw = _b64decode(body)
    if not hmac.compare_digest(_signature(secret, body), provided):
        raise XWorkmateError(INVALID)
    try:
        payload = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        raise XWorkmateError(INVALID) from None
    ref = _parse(payload)
    if ref.workspace_root_hash != workspace_root_hash(root):
        raise XWorkmateError(WRONG_WORKSPACE)
    if ref.session_scope != scope.session_scope or ref.run_scope != scope.relative:
        raise XWorkmateError(WRONG_RUN)
    return ref
