"""The ``[store]`` pool keys of config.toml: ``poolSize``, ``statementTimeoutMs``,
``lockTimeoutMs``."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from clawline.config import ConfigError, PoolSettings, load_settings


def _settings_with(tmp_path: Path, store_table: str) -> PoolSettings:
    (tmp_path / "config.toml").write_text(f"[store]\n{store_table}\n", encoding="utf-8")
    return load_settings({"CLAWLINE_STATE_DIR": str(tmp_path)}).store_pool


def test_defaults(tmp_path: Path) -> None:
    pool = load_settings({"CLAWLINE_STATE_DIR": str(tmp_path)}).store_pool
    assert pool == PoolSettings(size=4, statement_timeout_ms=30_000, lock_timeout_ms=10_000)


def test_values_from_the_file(tmp_path: Path) -> None:
    pool = _settings_with(tmp_path, "poolSize = 12\nstatementTimeoutMs = 0\nlockTimeoutMs = 250")
    assert pool == PoolSettings(size=12, statement_timeout_ms=0, lock_timeout_ms=250)


def test_bounds_are_accepted(tmp_path: Path) -> None:
    low = _settings_with(tmp_path, "poolSize = 1\nstatementTimeoutMs = 0\nlockTimeoutMs = 0")
    assert (low.size, low.statement_timeout_ms, low.lock_timeout_ms) == (1, 0, 0)
    top = 2_147_483_647
    high = _settings_with(
        tmp_path, f"poolSize = 64\nstatementTimeoutMs = {top}\nlockTimeoutMs = {top}"
    )
    assert (high.size, high.statement_timeout_ms, high.lock_timeout_ms) == (64, top, top)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("poolSize = 0", "config: store.poolSize must be an integer from 1 to 64"),
        ("poolSize = 65", "config: store.poolSize must be an integer from 1 to 64"),
        ('poolSize = "4"', "config: store.poolSize must be an integer from 1 to 64"),
        ("poolSize = 4.0", "config: store.poolSize must be an integer from 1 to 64"),
        ("poolSize = true", "config: store.poolSize must be an integer from 1 to 64"),
        (
            "statementTimeoutMs = -1",
            "config: store.statementTimeoutMs must be an integer from 0 to 2147483647",
        ),
        (
            "statementTimeoutMs = 2147483648",
            "config: store.statementTimeoutMs must be an integer from 0 to 2147483647",
        ),
        (
            "lockTimeoutMs = [10]",
            "config: store.lockTimeoutMs must be an integer from 0 to 2147483647",
        ),
    ],
)
def test_bad_values_name_the_key(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        _settings_with(tmp_path, line)
    assert str(error.value) == message


def test_settings_made_in_code_are_checked_too() -> None:
    with pytest.raises(ValidationError, match=r"lock_timeout_ms"):
        PoolSettings(lock_timeout_ms=-5)
