"""README.md works as written: its ``sh`` and ``python`` blocks, run top to bottom.

The commands run with ``bash`` in a scratch directory that stands for the clone (its ``.venv``
is a link to the virtual environment running this test, and the venv is off the PATH until the
README's ``. .venv/bin/activate`` puts its ``clawline`` there), against a new state directory
(``CLAWLINE_STATE_DIR``; no other ``CLAWLINE_*`` variable of the caller's environment). Every
command must exit 0.

The rules, all of them here:

- A shell session is modelled by a prelude: the ``.``/``source`` and ``export`` lines seen so
  far run again before every later command.
- A ``clawline gateway run …`` line starts the gateway in the background with
  ``CLAWLINE_GATEWAY_PORT=0`` (an option on the line wins, as the README says); the test waits
  for its two ready lines. A later such line replaces it, the way a reader stops one (Ctrl-C:
  SIGINT, exit 0) before trying the next; the last one is stopped the same way at the end.
- ``export CLAWLINE_GATEWAY_URL=<the README's default URL>`` exports the URL the running
  gateway printed instead (it listens on a free port, not on 18790).
- Every command's stdin is an empty pipe: ``clawline acp`` (ACP on stdio) reads EOF and exits.
- The commands of :data:`SKIPPED` are not run, each for the reason given; each must still be
  in the README.
- ``python`` blocks run as scripts, with the session's environment; blocks with an info string
  of :data:`NOT_COMMANDS` (configuration and output) are not run; any other info string fails.

Every process the test starts runs in a process group of its own, killed when the test ends
however it ends.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

README = Path(__file__).resolve().parents[1] / "README.md"
VENV_SCRIPT = Path(sys.executable).with_name("clawline")
DEFAULT_URL = "ws://127.0.0.1:18790"
READY = re.compile(r"clawline gateway listening on (ws://127\.0\.0\.1:(\d+))\n")
NOT_COMMANDS = frozenset({"toml", ""})
SKIPPED = {
    "scripts/install": "it makes .venv; this test runs in the venv it made",
    "scripts/test": "the whole suite, this test included",
    "CLAWLINE_GATEWAY_TOKEN=s3cret clawline gateway run --bind lan --auth token": (
        "it would listen on every interface of this machine"
    ),
    "clawline devices approve 7QX-4KD --scopes operator.read": (
        "an example code; tests/cli/test_devices.py pairs with a printed one"
    ),
    "clawline devices revoke 1a2b3c4d5e6f": "an example device id",
}
COMMAND_TIMEOUT_S = 60.0
READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0


@dataclass(frozen=True, slots=True)
class Step:
    line: int
    kind: str
    """``sh`` (one command) or ``python`` (one script)."""
    text: str

    @property
    def words(self) -> str:
        """The command without its comment, for matching the rules."""
        return " ".join(shlex.split(self.text, comments=True))

    def where(self) -> str:
        return f"README.md:{self.line}: {self.text.splitlines()[0]!r}"


def shell_commands(block: str, first_line: int) -> list[Step]:
    """The commands of a shell block whose first line is ``first_line``: continued lines joined
    (as bash joins them), comment-only lines dropped."""
    steps: list[Step] = []
    pending, start = "", first_line
    for number, raw in enumerate(block.splitlines(), first_line):
        if not pending:
            start = number
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1]
            continue
        command = (pending + raw).strip()
        pending = ""
        if command and not command.startswith("#"):
            steps.append(Step(start, "sh", command))
    assert not pending, f"README.md:{start}: a continued line with nothing after it"
    return steps


def readme_steps(text: str) -> list[Step]:
    steps: list[Step] = []
    for token in MarkdownIt().parse(text):
        if token.type != "fence":
            continue
        fence = token.map[0] + 1 if token.map else 0
        info = token.info.strip()
        if info == "sh":
            steps.extend(shell_commands(token.content, fence + 1))
        elif info == "python":
            steps.append(Step(fence + 1, "python", token.content))
        else:
            assert info in NOT_COMMANDS, f"README.md:{fence}: no rule for a {info!r} block"
    return steps


def _is_venv_bin(directory: str) -> bool:
    with contextlib.suppress(OSError):
        return Path(directory).resolve() == VENV_SCRIPT.parent.resolve()
    return False


def _kill_group(process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=STOP_TIMEOUT_S)


@dataclass
class Gateway:
    """A README gateway line running in the background; a thread reads its stdout."""

    step: Step
    process: subprocess.Popen[str]
    log_path: Path
    lines: queue.Queue[str] = field(default_factory=queue.Queue)
    url: str = ""

    def __post_init__(self) -> None:
        self.reader = threading.Thread(target=self._read_stdout, daemon=True)
        self.reader.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")  # the end of stdout: a gateway that exited is not waited for

    def _next_line(self) -> str:
        try:
            return self.lines.get(timeout=READY_TIMEOUT_S)
        except queue.Empty:
            return ""

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-4000:]

    def wait_ready(self) -> None:
        first = self._next_line()
        match = READY.fullmatch(first)
        assert match, f"{self.step.where()}: no ready line (got {first!r}); log:\n{self.log()}"
        self.url = match.group(1)
        assert self._next_line() == f"web chat: http://127.0.0.1:{match.group(2)}/\n"

    def interrupt(self) -> None:
        """Ctrl-C; the gateway must stop cleanly."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=STOP_TIMEOUT_S)
        assert code == 0, f"{self.step.where()}: exit {code} on SIGINT; log:\n{self.log()}"


class Reader:
    """Someone following a README in a scratch clone; it keeps every process it started."""

    def __init__(self, root: Path) -> None:
        self.clone = root / "clone"
        self.clone.mkdir()
        (self.clone / ".venv").symlink_to(sys.prefix, target_is_directory=True)
        self.scratch = root
        env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWLINE_")}
        env.pop("VIRTUAL_ENV", None)
        path = os.environ.get("PATH", os.defpath).split(os.pathsep)
        env["PATH"] = os.pathsep.join(d for d in path if not _is_venv_bin(d))
        self.env = {**env, "CLAWLINE_STATE_DIR": str(root / "state")}
        self.prelude: list[str] = []
        self.gateway: Gateway | None = None
        self.started: list[subprocess.Popen[str]] = []
        self.gateways: list[Gateway] = []
        self.skipped: set[str] = set()

    def follow(self, text: str) -> None:
        for step in readme_steps(text):
            self.run(step)
        assert self.gateway is not None, "no gateway runs at the end"
        self.gateway.interrupt()

    def run(self, step: Step) -> None:
        if step.kind == "python":
            script = self.scratch / f"readme-{step.line}.py"
            script.write_text(step.text, encoding="utf-8")
            self._check(step, self._bash(step, shlex.join([sys.executable, str(script)])))
            return
        words = step.words
        if words in SKIPPED:
            self.skipped.add(words)
        elif words.startswith("clawline gateway run"):
            self._start_gateway(step)
        elif words == f"export CLAWLINE_GATEWAY_URL={DEFAULT_URL}":
            assert self.gateway is not None, f"{step.where()}: no gateway runs"
            self.prelude.append(f"export CLAWLINE_GATEWAY_URL={self.gateway.url}")
        elif words.startswith((". ", "source ", "export ")):
            self._check(step, self._bash(step, step.text))
            self.prelude.append(step.text)
        else:
            self._check(step, self._bash(step, step.text))

    def clawline(self) -> Path | None:
        """What ``clawline`` is in the shell session so far."""
        found = self._bash(Step(0, "sh", "command -v"), "command -v clawline").stdout.strip()
        return Path(found).resolve() if found else None

    def _bash(self, step: Step, command: str) -> subprocess.CompletedProcess[str]:
        process = subprocess.Popen(
            ["bash", "-c", "\n".join(["set -e", *self.prelude, command])],
            cwd=self.clone,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.started.append(process)
        try:
            out, err = process.communicate("", timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise AssertionError(f"{step.where()} did not end") from None
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)

    def _check(self, step: Step, result: subprocess.CompletedProcess[str]) -> None:
        assert result.returncode == 0, (
            f"{step.where()} exited {result.returncode}\n"
            f"stdout:\n{result.stdout[-4000:]}\nstderr:\n{result.stderr[-4000:]}"
        )

    def _start_gateway(self, step: Step) -> None:
        if self.gateway is not None:
            self.gateway.interrupt()
            self.gateway = None
        log_path = self.scratch / f"gateway-{step.line}.log"
        with log_path.open("w", encoding="utf-8") as log:
            process = subprocess.Popen(
                ["bash", "-c", "\n".join(["set -e", *self.prelude, "exec " + step.text])],
                cwd=self.clone,
                env={**self.env, "CLAWLINE_GATEWAY_PORT": "0"},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                start_new_session=True,
            )
        self.started.append(process)
        gateway = Gateway(step, process, log_path)
        self.gateways.append(gateway)
        gateway.wait_ready()
        self.gateway = gateway

    def stop_everything(self) -> None:
        for process in self.started:
            if process.poll() is None:
                _kill_group(process)
        for gateway in self.gateways:
            gateway.reader.join(timeout=STOP_TIMEOUT_S)
        for process in self.started:
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()


@contextlib.contextmanager
def reader(root: Path) -> Iterator[Reader]:
    following = Reader(root)
    try:
        yield following
    finally:
        following.stop_everything()


def test_the_readme_runs_top_to_bottom(tmp_path: Path) -> None:
    assert sys.prefix != sys.base_prefix, "run the tests from the venv"
    with reader(tmp_path) as following:
        assert following.clawline() != VENV_SCRIPT.resolve()
        following.follow(README.read_text(encoding="utf-8"))
        assert following.clawline() == VENV_SCRIPT.resolve()
    assert following.skipped == set(SKIPPED), "a skip rule names no README command"


def test_a_failing_command_fails_and_the_gateway_is_stopped(tmp_path: Path) -> None:
    text = (
        "Text.\n\n"
        "```sh\n"
        ". .venv/bin/activate\n"
        "clawline gateway run   # in the background\n"
        "clawline sessions show \\\n"
        "    nope\n"
        "```\n"
    )
    with (
        pytest.raises(AssertionError, match=r"README\.md:6: 'clawline sessions show") as caught,
        reader(tmp_path) as following,
    ):
        following.follow(text)
    assert "exited 1" in str(caught.value)
    assert "error: session not found" in str(caught.value)
    [gateway] = following.gateways
    assert gateway.process.returncode == -signal.SIGKILL
    assert all(process.returncode is not None for process in following.started)


def test_the_rules_cover_every_block() -> None:
    steps = readme_steps("```sh\na \\\n  b  # c\n# only a comment\n\n```\n\n```toml\nx = 1\n```\n")
    assert steps == [Step(2, "sh", "a   b  # c")]
    assert steps[0].words == "a b"
    with pytest.raises(AssertionError, match=r"README\.md:1: no rule for a 'bash' block"):
        readme_steps("```bash\necho hi\n```\n")
