"""What ``clawline acp ls`` tells its user besides the listing: one error line when the default
bridge cannot reach its gateway, and a spinner on stderr only when stderr is a terminal."""

from __future__ import annotations

import pytest

from clawline.cli.render import progress

from .helpers import Cli


def test_an_unreachable_gateway_is_one_error_line(clawline: Cli) -> None:
    result = clawline.run("acp", "ls", "--tree", "--url", "ws://127.0.0.1:1")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith("error: cannot connect to ws://127.0.0.1:1/: "), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "exited with code" not in result.stderr


def test_progress_spins_on_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with progress("listing sessions…"):
        pass
    assert capsys.readouterr() == ("", "")
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich: treat stderr as a terminal
    with progress("listing sessions…"):
        pass
    shown = capsys.readouterr()
    assert shown.out == ""
    assert "listing sessions…" in shown.err
