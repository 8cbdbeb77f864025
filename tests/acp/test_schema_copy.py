"""The vendored ACP schemas (``tests/acp/schema/``): inside the repository, unmodified, licensed.

``schema/README.md`` records the sha256 of each copy; a changed file (an edit, a partial
update) fails here until the README says which release it is.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from tests.acp.schema_check import SCHEMA_DIR

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ("schema.v1.json", "schema.v1.unstable.json")


def recorded_digests() -> dict[str, str]:
    """``file → sha256`` as the README's digest block lists them."""
    readme = (SCHEMA_DIR / "README.md").read_text(encoding="utf-8")
    return {
        name: digest
        for digest, name in re.findall(r"^([0-9a-f]{64})  (\S+)$", readme, re.MULTILINE)
    }


def test_the_schemas_are_read_from_inside_the_repository() -> None:
    assert SCHEMA_DIR.is_relative_to(ROOT)
    assert SCHEMA_DIR == ROOT / "tests" / "acp" / "schema"


@pytest.mark.parametrize("name", SCHEMAS)
def test_each_copy_is_the_recorded_upstream_file(name: str) -> None:
    data = (SCHEMA_DIR / name).read_bytes()
    assert recorded_digests()[name] == hashlib.sha256(data).hexdigest()
    schema = json.loads(data)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    methods = {entry.get("x-method") for entry in schema["$defs"].values()}
    assert {"initialize", "session/new", "session/prompt", "session/list"} <= methods


def test_the_digest_block_lists_exactly_the_copies() -> None:
    assert sorted(recorded_digests()) == sorted(SCHEMAS)


def test_the_licence_travels_with_the_copies() -> None:
    licence = (SCHEMA_DIR / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence
    assert "Version 2.0, January 2004" in licence
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in licence
    readme = (SCHEMA_DIR / "README.md").read_text(encoding="utf-8")
    assert "agentclientprotocol/agent-client-protocol" in readme
    assert "schema-v1.21.0" in readme
